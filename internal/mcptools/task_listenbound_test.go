package mcptools_test

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/mcptools"
)

// TestExtListenEndsAtTheWaitBound: a subscriptions/listen for a task that
// stays working ends with its result at the server's wait bound, well
// before any HTTP write deadline would cut it, so the host listens again;
// the next listen carries the task's notification once it ends.
func TestExtListenEndsAtTheWaitBound(t *testing.T) {
	t.Parallel()
	for _, ep := range endpoints {
		t.Run(ep.name, func(t *testing.T) {
			t.Parallel()
			o := ep.o
			o.maxWait = time.Second
			w := newWorld(t, o)
			c := w.connect("tok-alice", ext, -1, extCaps)
			id := startExt(t, c, "elicit_approval", approvalArgs)
			next := openListen(t, w, "tok-alice", id)
			if ack := next("the acknowledgement"); ack["method"] != "notifications/subscriptions/acknowledged" {
				t.Fatalf("acknowledgement %v", ack)
			}
			if end := next("the listen's result at the wait bound"); end["id"] != float64(9) || end["result"] == nil {
				t.Fatalf("the listen ended with %v", end)
			}
			next = openListen(t, w, "tok-alice", id)
			next("the second acknowledgement")
			w.decide(id, elicitation.Submission{Decision: elicitation.DecisionSubmitted})
			if n := next("the task's notification"); n["method"] != "notifications/tasks" || n["params"].(map[string]any)["taskId"] != id {
				t.Fatalf("notification %v", n)
			}
		})
	}
}

// stateReads counts the store's reads of a request's state.
type stateReads struct {
	elicitation.Store
	n *atomic.Int64
}

func (s stateReads) State(ctx context.Context, id string) (elicitation.State, error) {
	s.n.Add(1)
	return s.Store.State(ctx, id)
}

// TestExtListenReadsBounded: a listen naming many task ids reads at most
// MaxListenTasks of them (the first distinct ones named), however many it
// names, so one request costs the store a bounded number of reads; its
// own tasks among them are acknowledged as always.
func TestExtListenReadsBounded(t *testing.T) {
	t.Parallel()
	var reads atomic.Int64
	w := newWorld(t, worldOptions{stateless: true, wrapStore: func(st elicitation.Store) elicitation.Store { return stateReads{Store: st, n: &reads} }})
	c := w.connect("tok-alice", ext, -1, extCaps)
	id := startExt(t, c, "elicit_approval", approvalArgs)
	ids := []string{id, id}
	for i := range 5000 {
		ids = append(ids, "unknown-"+strconv.Itoa(i))
	}
	before := reads.Load()
	ack := openListen(t, w, "tok-alice", ids...)("the acknowledgement")
	if got := fmt.Sprint(ack["params"].(map[string]any)["notifications"]); got != "map[taskIds:["+id+"]]" {
		t.Fatalf("acknowledgement %v, want alice's task alone", ack)
	}
	if n := reads.Load() - before; n > mcptools.MaxListenTasks+10 {
		t.Fatalf("a listen naming %d ids read the store %d times, want at most about %d", len(ids), n, mcptools.MaxListenTasks)
	}
}
