package storetest

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// watchTimeout bounds how long a test waits for a wake that must come.
const watchTimeout = 10 * time.Second

func testWatch(t *testing.T, open Factory) {
	a, b := open(t)
	t.Run("woken by a resolution through either handle", func(t *testing.T) { testWatchWoken(t, a, b) })
	t.Run("no wake lost between registering and a decision", func(t *testing.T) { testWatchNoLostWake(t, a, b) })
	t.Run("stop stops", func(t *testing.T) { testWatchStop(t, a, b) })
}

// wakeChannel is a wake that never blocks and a channel it signals.
func wakeChannel() (wake func(), woken <-chan struct{}) {
	ch := make(chan struct{}, 1)
	return func() {
		select {
		case ch <- struct{}{}:
		default:
		}
	}, ch
}

// awaitDecided waits on woken until a read of id finds it no longer
// pending (a wake may come for nothing), and returns that state.
func awaitDecided(ctx context.Context, s elicitation.Store, id string, woken <-chan struct{}) (elicitation.State, error) {
	timeout := time.After(watchTimeout)
	for {
		st, err := s.State(ctx, id)
		if err != nil || st.Status != elicitation.StatusPending {
			return st, err
		}
		select {
		case <-woken:
		case <-timeout:
			return st, fmt.Errorf("no wake within %v of the decision", watchTimeout)
		}
	}
}

func testWatchWoken(t *testing.T, a, b elicitation.Store) {
	ctx := ctxT(t)
	often := func() time.Duration { return 20 * time.Millisecond }
	cases := []struct {
		name           string
		res            elicitation.Resolution
		watch, resolve elicitation.Store
		every          func() time.Duration
	}{
		{"submitted through the other handle", elicitation.Resolution{Status: elicitation.StatusSubmitted, SubmissionID: "s", By: "reviewer", Answer: &elicitation.Answer{SelectedIDs: []string{"opt-0"}}}, a, b, nil},
		{"canceled through the other handle", elicitation.Resolution{Status: elicitation.StatusCanceled, By: "alice"}, b, a, nil},
		{"declined through the same handle", elicitation.Resolution{Status: elicitation.StatusDeclined, SubmissionID: "s", By: "reviewer"}, a, a, nil},
		{"declined through the other handle, read at the caller's interval", elicitation.Resolution{Status: elicitation.StatusDeclined, SubmissionID: "s", By: "reviewer"}, a, b, often},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := NewSelection(t, 2, time.Hour)
			mustCreate(t, a, r)
			wake, woken := wakeChannel()
			stop := c.watch.Watch(r.State.ID, c.every, wake)
			defer stop()
			c.res.At = T0.Add(time.Minute)
			mustResolve(ctx, t, c.resolve, r.State.ID, c.res)
			select {
			case <-woken:
			case <-time.After(watchTimeout):
				t.Fatalf("no wake within %v of the resolution", watchTimeout)
			}
			// The wake says the state may have changed; a read tells.
			if st, err := awaitDecided(ctx, c.watch, r.State.ID, woken); err != nil || st.Status != c.res.Status {
				t.Errorf("after the wake: %q, %v; want %q", st.Status, err, c.res.Status)
			}
		})
	}
}

// testWatchNoLostWake races watchers registering (then reading, as
// Service.AwaitFunc does) against the decision: each must see it.
func testWatchNoLostWake(t *testing.T, a, b elicitation.Store) {
	ctx := ctxT(t)
	start := make(chan struct{})
	declineAmongWaiters(t, a, b, 20, func(h elicitation.Store, id string) (elicitation.State, error) {
		<-start
		wake, woken := wakeChannel()
		defer h.Watch(id, nil, wake)()
		return awaitDecided(ctx, h, id, woken)
	}, func() { close(start) })
}

// testWatchStop: a stopped watch is not woken by a later resolution (the
// watch that is still on, registered after it, is: by then the stopped
// one would have been too), stop is idempotent, and a wake may stop its
// own watch.
func testWatchStop(t *testing.T, a, b elicitation.Store) {
	ctx := ctxT(t)
	r := NewApproval(t, time.Hour)
	mustCreate(t, a, r)
	var stoppedWakes atomic.Int32
	stop := a.Watch(r.State.ID, nil, func() { stoppedWakes.Add(1) })
	stop()
	stop()
	woken := make(chan struct{})
	var once sync.Once
	var stopSelf func()
	var mu sync.Mutex
	mu.Lock()
	stopSelf = a.Watch(r.State.ID, nil, func() {
		mu.Lock()
		defer mu.Unlock()
		stopSelf() // from within its own wake
		once.Do(func() { close(woken) })
	})
	mu.Unlock()
	mustResolve(ctx, t, b, r.State.ID, elicitation.Resolution{Status: elicitation.StatusDeclined, SubmissionID: "s", At: T0, By: "reviewer"})
	select {
	case <-woken:
	case <-time.After(watchTimeout):
		t.Fatalf("the watch still on was not woken within %v", watchTimeout)
	}
	if n := stoppedWakes.Load(); n != 0 {
		t.Errorf("the stopped watch was woken %d times", n)
	}
}
