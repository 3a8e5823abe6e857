package elicitation

import (
	"context"
	"fmt"
	"time"
)

// PollingWaiter is implemented by stores whose Wait reads the request
// again and again (dynamostore) rather than being woken by the write that
// resolves it (boltstore). WaitEvery is Wait, reading once per every()
// (asked before each read), so that a long, cheap watch can read rarely;
// a resolution made through the same store handle still wakes it at once.
type PollingWaiter interface {
	WaitEvery(ctx context.Context, id string, every func() time.Duration) (State, error)
}

// Watch timing for a store whose Wait polls: each watch reads at least
// every WatchPoll, and all of a Service's watches together at most
// WatchReadsPerSecond times a second (so 3,000 watches read each request
// every 150 s). A decision made through the same process wakes a watch at
// once whatever the store.
const (
	WatchPoll           = 15 * time.Second
	WatchReadsPerSecond = 20
)

// Watch waits, without the wait bound of Await, until the request is no
// longer pending (decided, canceled, or expired at its expiresAt) and
// returns its state; it returns ctx's error if ctx ends first. It is for
// long, idle watches (the complete notice of a push): the store's own
// wake-up ends it, as it ends Await, and where the store can only poll
// (PollingWaiter) it reads rarely (WatchPoll, WatchReadsPerSecond).
func (s *Service) Watch(ctx context.Context, principal, id string) (State, error) {
	st, err := s.owned(ctx, principal, id)
	if err != nil {
		return State{}, err
	}
	now := s.now()
	if st.StatusAt(now) != StatusPending {
		return s.derive(st), nil
	}
	wctx, cancel := context.WithTimeout(ctx, st.ExpiresAt.Sub(now))
	defer cancel()
	var got State
	if pw, ok := s.store.(PollingWaiter); ok {
		s.watching.Add(1)
		defer s.watching.Add(-1)
		got, err = pw.WaitEvery(wctx, id, s.watchEvery)
	} else {
		got, err = s.store.Wait(wctx, id)
	}
	switch {
	case err == nil:
		return s.derive(got), nil
	case ctx.Err() != nil || wctx.Err() == nil:
		return State{}, fmt.Errorf("watch %s: %w", id, err)
	}
	// Its expiry came: read it once more (a decision may have landed
	// at the last moment).
	return s.Status(ctx, principal, id)
}

// watchEvery is the interval of one polling watch: WatchPoll, longer when
// so many watches run that they would read more than WatchReadsPerSecond.
func (s *Service) watchEvery() time.Duration {
	n := time.Duration(s.watching.Load())
	return max(WatchPoll, n*time.Second/WatchReadsPerSecond)
}
