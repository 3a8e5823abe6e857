package mcptools_test

import (
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
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
