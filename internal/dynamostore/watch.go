package dynamostore

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// Watch implements elicitation.Store, and is the store's one polling
// loop. A resolution through this Store wakes it at once; one made
// elsewhere (another process, another Lambda) is found by reading the
// state item every every() (nil: every PollInterval), on a timer, so that
// a watch holds no goroutine between its reads. A read wakes it when the
// request is no longer pending or is gone, or when reads have failed for
// PollFailureTolerance (the woken caller's own read then meets the
// failure); a short outage wakes nothing.
func (s *Store) Watch(id string, every func() time.Duration, wake func()) (stop func()) {
	if every == nil {
		every = func() time.Duration { return s.poll }
	}
	w := &pollWatch{s: s, id: id, wake: wake, every: every}
	w.ctx, w.cancel = context.WithCancel(context.Background())
	unwatch := s.wakes.Watch(id, wake)
	w.mu.Lock()
	w.timer = time.AfterFunc(every(), w.poll)
	w.mu.Unlock()
	return func() {
		unwatch()
		w.stop()
	}
}

// pollWatch is one Watch's polling of the state item.
type pollWatch struct {
	s     *Store
	id    string
	wake  func()
	every func() time.Duration
	ctx   context.Context // ends with the watch: a read under way gives up
	// cancel ends ctx.
	cancel context.CancelFunc

	mu      sync.Mutex
	timer   *time.Timer
	stopped bool
	failing time.Time // since when reads have been failing (zero: the last one succeeded)
}

// poll reads the state item once, wakes the watch if the read says to, and
// schedules the next read.
func (w *pollWatch) poll() {
	cur, err := w.s.read(w.ctx, w.id)
	w.mu.Lock()
	if w.stopped {
		w.mu.Unlock()
		return
	}
	var changed bool
	switch {
	case err == nil:
		w.failing = time.Time{}
		changed = cur.Status != elicitation.StatusPending
	case errors.Is(err, elicitation.ErrNotFound):
		changed = true
	case w.failing.IsZero():
		w.failing = time.Now()
	default:
		changed = time.Since(w.failing) >= w.s.tolerance
	}
	w.timer.Reset(w.every())
	w.mu.Unlock()
	if changed {
		w.wake()
	}
}

func (w *pollWatch) stop() {
	w.mu.Lock()
	w.stopped = true
	w.timer.Stop()
	w.mu.Unlock()
	w.cancel()
}
