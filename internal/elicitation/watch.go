package elicitation

import (
	"context"
	"time"
)

// Watch timing for a store that can only poll (dynamostore): each watch
// reads at least every WatchPoll, and all of a Service's watches together
// at most WatchReadsPerSecond times a second (so 3,000 watches read each
// request every 150 s). A decision made through the same process wakes a
// watch at once whatever the store.
const (
	WatchPoll           = 15 * time.Second
	WatchReadsPerSecond = 20
)

// Watch waits, without the wait bound of Await, until the request is no
// longer pending (decided, canceled, or expired at its expiresAt) and
// returns its state; it returns ctx's error if ctx ends first. It is for
// long, idle watches (the complete notice of a push): the wait of Await
// (watchFunc) bounded by the request's expiry alone, reading rarely where
// the store can only poll (WatchPoll, WatchReadsPerSecond).
func (s *Service) Watch(ctx context.Context, principal, id string) (State, error) {
	s.watching.Add(1)
	defer s.watching.Add(-1)
	return waitFor(func(done func(State, error)) {
		s.watchFunc(ctx, principal, id, func(st State, now time.Time) time.Duration {
			return st.ExpiresAt.Sub(now)
		}, s.watchEvery, done)
	})
}

// watchEvery is the interval of one polling watch: WatchPoll, longer when
// so many watches run that they would read more than WatchReadsPerSecond.
func (s *Service) watchEvery() time.Duration {
	n := time.Duration(s.watching.Load())
	return max(WatchPoll, n*time.Second/WatchReadsPerSecond)
}
