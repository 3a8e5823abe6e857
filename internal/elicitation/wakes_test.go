package elicitation_test

import (
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// TestWakes: a Wake calls every watch of its id once (each on a goroutine
// of its own) and no watch of another id; a watch stopped before the Wake
// is never called, a second stop changes nothing, and a wake may stop its
// own watch, after which the next Wake does not call it. synctest.Wait
// waits for every goroutine a Wake started, so "never called" is seen,
// not assumed.
func TestWakes(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var w elicitation.Wakes
		var live, other, stopped, once atomic.Int32
		w.Watch("a", func() { live.Add(1) })
		w.Watch("b", func() { other.Add(1) })
		stop := w.Watch("a", func() { stopped.Add(1) })
		stop()
		stop()
		var stopSelf func()
		stopSelf = w.Watch("a", func() { once.Add(1); stopSelf() })

		w.Wake("a")
		synctest.Wait()
		if live.Load() != 1 || once.Load() != 1 || other.Load() != 0 || stopped.Load() != 0 {
			t.Fatalf("after one wake of a: live %d, self-stopping %d, b's %d, stopped %d; want 1, 1, 0, 0", live.Load(), once.Load(), other.Load(), stopped.Load())
		}
		w.Wake("a")
		w.Wake("b")
		synctest.Wait()
		if live.Load() != 2 || once.Load() != 1 || other.Load() != 1 || stopped.Load() != 0 {
			t.Fatalf("after the second wakes: live %d, self-stopping %d, b's %d, stopped %d; want 2, 1, 1, 0", live.Load(), once.Load(), other.Load(), stopped.Load())
		}
	})
}
