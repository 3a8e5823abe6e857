package storetest

import (
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// WaitSignal is a Store that tells a test when a wait starts (a Watch,
// the one wait of every store, under Service.Await, AwaitFunc and Watch):
// it sends the request's id on Waiting once the watch is registered, if
// there is room (a test drains it), so that a test decides while a wait
// is in the store rather than after a sleep that guesses it is.
type WaitSignal struct {
	elicitation.Store
	Waiting chan string
}

// NewWaitSignal wraps st with a Waiting channel of room n.
func NewWaitSignal(st elicitation.Store, n int) *WaitSignal {
	return &WaitSignal{Store: st, Waiting: make(chan string, n)}
}

// Watch implements elicitation.Store, signalling once registered.
func (w *WaitSignal) Watch(id string, every func() time.Duration, wake func()) (stop func()) {
	stop = w.Store.Watch(id, every, wake)
	select {
	case w.Waiting <- id:
	default:
	}
	return stop
}

// Forget drops the signals of earlier waits.
func (w *WaitSignal) Forget() {
	for {
		select {
		case <-w.Waiting:
		default:
			return
		}
	}
}

// InWait returns once a Watch on id has started, or fails t after 10 s;
// call Forget before starting the call that waits.
func (w *WaitSignal) InWait(t testing.TB, id string) {
	t.Helper()
	for {
		select {
		case got := <-w.Waiting:
			if got == id {
				return
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no Watch on %s started", id)
		}
	}
}
