package mcptools_test

import (
	"testing"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/mcptools"
)

// TestCoreGetReviewURL: a 2025-11-25 tasks/get of a working task carries
// the review link in _meta, where a host reads it without parsing the
// status message; once the task is over it does not.
func TestCoreGetReviewURL(t *testing.T) {
	t.Parallel()
	for _, ep := range endpoints {
		t.Run(ep.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, ep.o)
			c := w.connect("tok-alice", core, -1, nil)
			id, _ := startTask(t, c, "elicit_approval", approvalArgs)
			w.mu.Lock()
			link := w.created[id]
			w.mu.Unlock()
			got := c.Must("tasks/get", id)
			meta, _ := got["_meta"].(map[string]any)
			if link == "" || meta[mcptools.MetaReviewURL] != link {
				t.Fatalf("tasks/get of a working task: _meta %v, want %q under %q", got["_meta"], link, mcptools.MetaReviewURL)
			}
			w.decide(id, elicitation.Submission{Decision: elicitation.DecisionSubmitted})
			if got := c.Must("tasks/get", id); got["status"] != "completed" || got["_meta"] != nil {
				t.Fatalf("tasks/get of a completed task: %v, want no review link", got)
			}
		})
	}
}
