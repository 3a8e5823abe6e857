package elicitation

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// AwaitFunc is Await without blocking: the one place that decides what an
// await answers. It checks the owner and whether the request is still
// pending, bounds the wait as Await says, and calls done exactly once with
// what Await returns: when a wake of the store's Watch finds the request
// no longer pending (its state), when the bound elapses (the state then,
// pending or expired), when ctx ends first (an error wrapping ctx's), or
// when a read fails twice running (that error: a read that fails once, a
// store's passing fault as a wake finds a decision, is tried again after
// RereadAfter, so that one failed read does not cost the agent an answer
// that is there). done is called on the caller's goroutine before
// AwaitFunc returns when there is nothing to wait for, else later on a
// goroutine of the store's wake or of a timer, so it should not block for
// long. While it waits, an await holds no goroutine: a store watch, a
// timer and an AfterFunc on ctx (watchFunc, the one wait that Await,
// AwaitFunc and Watch share).
func (s *Service) AwaitFunc(ctx context.Context, principal, id string, wait time.Duration, done func(State, error)) {
	s.watchFunc(ctx, principal, id, func(st State, now time.Time) time.Duration {
		return min(s.WaitBound(ctx, wait), st.ExpiresAt.Sub(now))
	}, nil, done)
}

// watchFunc is every wait of the Service: it reads the request for its
// owner and, if it is pending, watches it (the store's Watch, reading every
// every() where the store can only poll; nil: the store's own interval)
// until a wake finds it no longer pending, the bound the request's state
// gives elapses, ctx ends, or reads fail twice running, and calls done
// once, as AwaitFunc says.
func (s *Service) watchFunc(ctx context.Context, principal, id string, bound func(State, time.Time) time.Duration, every func() time.Duration, done func(State, error)) {
	st, err := s.owned(ctx, principal, id)
	if err != nil {
		done(State{}, err)
		return
	}
	now := s.now()
	if st.StatusAt(now) != StatusPending {
		done(s.derive(st), nil)
		return
	}
	b := bound(st, now)
	if b <= 0 {
		done(s.derive(st), nil)
		return
	}
	a := &awaiting{s: s, ctx: ctx, id: id, done: done, last: st}
	s.waiting.Add(1)
	a.start(b, every)
}

// awaiting is one wait: whichever of its ends comes first (a wake that
// finds a decision, the bound, ctx's end, two failed reads) calls done.
type awaiting struct {
	s    *Service
	ctx  context.Context
	id   string
	done func(State, error)

	mu        sync.Mutex // held while start registers the ends
	last      State      // the state last read (pending)
	ended     bool
	stopWatch func()
	timer     *time.Timer
	stopCtx   func() bool
	failed    bool        // the last read failed
	reread    *time.Timer // the read again after a failed one
}

// RereadAfter is how long an await waits to read the state again after a
// read failed (a second failure ends it).
const RereadAfter = 100 * time.Millisecond

// start registers the three ends, then reads the state once more: a
// decision that landed before the watch began wakes nothing.
func (a *awaiting) start(bound time.Duration, every func() time.Duration) {
	a.mu.Lock()
	a.stopWatch = a.s.store.Watch(a.id, every, a.check)
	a.timer = time.AfterFunc(bound, a.bounded)
	a.stopCtx = context.AfterFunc(a.ctx, a.canceled)
	a.mu.Unlock()
	a.check()
}

// check reads the state: the wait ends if it is no longer pending (as
// stored: the bound derives expiry) or the read failed twice running
// (readFailed).
func (a *awaiting) check() {
	a.mu.Lock()
	ended := a.ended
	a.mu.Unlock()
	if ended {
		return // a wake on its way as the wait ended
	}
	st, err := a.s.store.State(a.ctx, a.id)
	switch {
	case err == nil && st.Status != StatusPending:
		a.end(a.s.derive(st), nil)
	case err == nil:
		a.mu.Lock()
		a.last, a.failed = st, false
		a.mu.Unlock()
	case a.ctx.Err() != nil:
		a.canceled()
	default:
		a.readFailed(err)
	}
}

// readFailed ends the wait with err if the read before also failed, and
// otherwise reads again after RereadAfter (the bound, ctx's end and a
// wake still end or check it first).
func (a *awaiting) readFailed(err error) {
	a.mu.Lock()
	again := !a.failed && !a.ended
	a.failed = true
	if again {
		if a.reread == nil {
			a.reread = time.AfterFunc(RereadAfter, a.check)
		} else {
			a.reread.Reset(RereadAfter)
		}
	}
	a.mu.Unlock()
	if !again {
		a.end(State{}, fmt.Errorf("await %s: %w", a.id, err))
	}
}

// bounded ends the wait at its bound with the state as it stands: read
// once more (a decision may have landed since the last read, which a store
// that polls has not seen yet), the state last read if that read fails.
func (a *awaiting) bounded() {
	if a.ctx.Err() != nil {
		a.canceled()
		return
	}
	st, err := a.s.store.State(a.ctx, a.id)
	if err != nil {
		a.mu.Lock()
		st = a.last
		a.mu.Unlock()
	}
	a.end(a.s.derive(st), nil)
}

// canceled ends the wait with ctx's error.
func (a *awaiting) canceled() {
	a.end(State{}, fmt.Errorf("await %s: %w", a.id, a.ctx.Err()))
}

// end calls done, once, after stopping the other ends.
func (a *awaiting) end(st State, err error) {
	a.mu.Lock()
	if a.ended {
		a.mu.Unlock()
		return
	}
	a.ended = true
	a.s.waiting.Add(-1)
	if a.reread != nil {
		a.reread.Stop()
	}
	a.mu.Unlock()
	a.stopWatch()
	a.timer.Stop()
	a.stopCtx()
	a.done(st, err)
}
