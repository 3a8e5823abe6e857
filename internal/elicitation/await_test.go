package elicitation_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/boltstore"
	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/elicitation/storetest"
	"github.com/mcp-elicitation/elicitation/internal/testclock"
)

// liveWatches counts the store watches not yet stopped, so that a test
// sees that an ended await left none behind.
type liveWatches struct {
	*storetest.WaitSignal
	live atomic.Int32
	// failStates fails that many State reads from now (a store's fault
	// that passes), each counted on failedStates.
	failStates, failedStates atomic.Int32
}

var errStoreFault = errors.New("store fault")

func (w *liveWatches) State(ctx context.Context, id string) (elicitation.State, error) {
	if w.failStates.Add(-1) >= 0 {
		w.failedStates.Add(1)
		return elicitation.State{}, errStoreFault
	}
	w.failStates.Store(0)
	return w.WaitSignal.State(ctx, id)
}

func (w *liveWatches) Watch(id string, every func() time.Duration, wake func()) func() {
	w.live.Add(1)
	stop := w.WaitSignal.Watch(id, every, wake)
	var once sync.Once
	return func() { once.Do(func() { stop(); w.live.Add(-1) }) }
}

// awaitEnv is one Service over a bolt store, with a clock the test moves.
type awaitEnv struct {
	svc   *elicitation.Service
	clock *testclock.Clock
	store *liveWatches
	cr    elicitation.Created // a pending approval of "alice", 60 s
}

func newAwaitEnv(t *testing.T) *awaitEnv {
	t.Helper()
	st, err := boltstore.Open(filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	e := &awaitEnv{clock: testclock.New(time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC))}
	e.store = &liveWatches{WaitSignal: storetest.NewWaitSignal(st, 16)}
	e.svc = elicitation.NewService(elicitation.Config{Store: e.store, Now: e.clock.Now, MaxWait: 5 * time.Second})
	e.cr, err = e.svc.Create(context.Background(), "alice", elicitation.KindApproval, elicitation.Input{Message: "m", Context: json.RawMessage(`1`), TimeoutSeconds: 60})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *awaitEnv) decide(t *testing.T, d elicitation.Decision) {
	t.Helper()
	if _, err := e.svc.Submit(context.Background(), e.cr.State.ID, e.cr.ReviewKey, elicitation.Submission{ID: "s", Decision: d}); err != nil {
		t.Fatal(err)
	}
}

// TestAwaitFunc: AwaitFunc decides what Await decides and calls done
// exactly once, at each of its ends: at once (not its owner, decided
// already, expired, no time left), on a wake that finds a decision or a
// cancel, at the bound (the state then: pending, or expired at
// expiresAt), at ctx's end (its error); and leaves no watch behind.
func TestAwaitFunc(t *testing.T) {
	t.Parallel()
	type call struct {
		principal string
		wait      time.Duration
		ctx       func(context.Context) (context.Context, context.CancelFunc)
	}
	cases := []struct {
		name    string
		before  func(t *testing.T, e *awaitEnv) // before the call
		call    call
		waiting func(t *testing.T, e *awaitEnv, cancel context.CancelFunc) // once its watch began; nil: done comes at once
		want    elicitation.Status
		wantErr error
	}{
		{name: "another principal's", call: call{principal: "mallory"}, wantErr: elicitation.ErrNotFound},
		{name: "decided already", before: func(t *testing.T, e *awaitEnv) { e.decide(t, elicitation.DecisionDeclined) }, want: elicitation.StatusDeclined},
		{name: "expired already", before: func(t *testing.T, e *awaitEnv) { e.clock.Add(time.Minute) }, want: elicitation.StatusExpired},
		{name: "no time left before the caller's deadline", call: call{ctx: func(ctx context.Context) (context.Context, context.CancelFunc) {
			return context.WithTimeout(ctx, time.Second) // less than the 2 s margin
		}}, want: elicitation.StatusPending},
		{name: "woken by a decision", waiting: func(t *testing.T, e *awaitEnv, _ context.CancelFunc) { e.decide(t, elicitation.DecisionSubmitted) }, want: elicitation.StatusSubmitted},
		{name: "woken by a cancel", waiting: func(t *testing.T, e *awaitEnv, _ context.CancelFunc) {
			if _, err := e.svc.Cancel(context.Background(), "alice", e.cr.State.ID); err != nil {
				t.Fatal(err)
			}
		}, want: elicitation.StatusCanceled},
		{name: "the bound elapses", call: call{wait: 50 * time.Millisecond}, waiting: func(*testing.T, *awaitEnv, context.CancelFunc) {}, want: elicitation.StatusPending},
		// A second of real time to expiresAt, in which the clock passes it.
		{name: "the bound is expiresAt", before: func(t *testing.T, e *awaitEnv) { e.clock.Add(time.Minute - time.Second) },
			waiting: func(t *testing.T, e *awaitEnv, _ context.CancelFunc) { e.clock.Add(time.Second) }, want: elicitation.StatusExpired},
		{name: "ctx ends", waiting: func(_ *testing.T, _ *awaitEnv, cancel context.CancelFunc) { cancel() }, wantErr: context.Canceled},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newAwaitEnv(t)
			if c.before != nil {
				c.before(t, e)
			}
			principal := c.call.principal
			if principal == "" {
				principal = "alice"
			}
			newCtx := c.call.ctx
			if newCtx == nil {
				newCtx = context.WithCancel
			}
			ctx, cancel := newCtx(context.Background())
			defer cancel()
			type outcome struct {
				st  elicitation.State
				err error
			}
			dones := make(chan outcome, 2)
			var returned atomic.Bool
			var early atomic.Bool // done came before AwaitFunc returned
			e.store.Forget()
			e.svc.AwaitFunc(ctx, principal, e.cr.State.ID, c.call.wait, func(st elicitation.State, err error) {
				early.Store(!returned.Load())
				dones <- outcome{st, err}
			})
			returned.Store(true)
			if c.waiting != nil {
				e.store.InWait(t, e.cr.State.ID)
				c.waiting(t, e, cancel)
			}
			var got outcome
			select {
			case got = <-dones:
			case <-time.After(10 * time.Second):
				t.Fatal("done was not called")
			}
			if c.waiting == nil && !early.Load() {
				t.Error("done came after AwaitFunc returned, with nothing to wait for")
			}
			if c.wantErr != nil {
				if !errors.Is(got.err, c.wantErr) {
					t.Errorf("err = %v, want %v", got.err, c.wantErr)
				}
			} else if got.err != nil || got.st.Status != c.want {
				t.Errorf("done(%q, %v), want %q", got.st.Status, got.err, c.want)
			}
			if n := e.store.live.Load(); n != 0 {
				t.Errorf("%d watches left after done", n)
			}
			// Its other ends are gone: a cancel, a decision, the bound's
			// time call nothing more. A bounded look: nothing should come.
			cancel()
			if c.want == elicitation.StatusPending {
				e.decide(t, elicitation.DecisionDeclined)
			}
			select {
			case again := <-dones:
				t.Errorf("done called again with %q, %v", again.st.Status, again.err)
			case <-time.After(100 * time.Millisecond):
			}
		})
	}
}

// TestAwaitFuncRereadsAFailedRead: a read that fails as a wake finds a
// decision is tried again (after RereadAfter), so the await answers the
// decision; a second failure running ends it with the store's error. Both
// leave no watch behind.
func TestAwaitFuncRereadsAFailedRead(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		fails   int32
		want    elicitation.Status
		wantErr error
	}{
		{fails: 1, want: elicitation.StatusSubmitted},
		{fails: 2, wantErr: errStoreFault},
	} {
		e := newAwaitEnv(t)
		e.store.Forget()
		type outcome struct {
			st  elicitation.State
			err error
		}
		dones := make(chan outcome, 2)
		e.svc.AwaitFunc(context.Background(), "alice", e.cr.State.ID, 0, func(st elicitation.State, err error) { dones <- outcome{st, err} })
		e.store.InWait(t, e.cr.State.ID)
		e.store.failStates.Store(c.fails)
		e.decide(t, elicitation.DecisionSubmitted)
		var got outcome
		select {
		case got = <-dones:
		case <-time.After(10 * time.Second):
			t.Fatalf("%d failed reads: done was not called", c.fails)
		}
		if n := e.store.failedStates.Load(); n != c.fails {
			t.Errorf("%d failed reads planned, %d failed", c.fails, n)
		}
		if c.wantErr != nil {
			if !errors.Is(got.err, c.wantErr) {
				t.Errorf("%d failed reads: err = %v, want %v", c.fails, got.err, c.wantErr)
			}
		} else if got.err != nil || got.st.Status != c.want {
			t.Errorf("%d failed reads: done(%q, %v), want %q", c.fails, got.st.Status, got.err, c.want)
		}
		if n := e.store.live.Load(); n != 0 {
			t.Errorf("%d failed reads: %d watches left after done", c.fails, n)
		}
	}
}
