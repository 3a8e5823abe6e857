package mcptools_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/testenv"
)

// TestExtTasksClient: the Tasks extension's own TypeScript client
// (@modelcontextprotocol/ext-tasks 0.2.2 on @modelcontextprotocol/client
// 2.4.0, protocol 2026-07-28) against the local default endpoint and
// --stateless with two processes.
func TestExtTasksClient(t *testing.T) {
	testenv.Slow(t, "TypeScript ext-tasks client")
	t.Parallel()
	testenv.NodeModule(t, "@modelcontextprotocol/ext-tasks/package.json")
	testenv.NodeModule(t, "@modelcontextprotocol/client/package.json")
	approval, _ := json.Marshal(approvalArgs)
	for _, ep := range endpoints {
		t.Run(ep.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, ep.o)
			run := func(scenario, tool, args string) (*nodeHost, string) {
				h := startNode(t, "tsext.mjs", w.servers[0].URL+"/mcp", "tok-alice", scenario, tool, args)
				c := h.next("connected")
				if c["protocolVersion"] != ext || c["era"] != "modern" || c["extensions"].(map[string]any)["io.modelcontextprotocol/tasks"] == nil {
					t.Fatalf("connected: %v", c)
				}
				h.next("wire") // the task-creating tools/call
				s := h.next("started")
				if s["kind"] != "task" {
					t.Fatalf("started: %v", s)
				}
				return h, s["taskId"].(string)
			}
			outcome := func(h *nodeHost) map[string]any {
				for {
					ev := h.nextAny()
					if ev["event"] == "outcome" {
						return ev
					}
				}
			}
			t.Run("decide", func(t *testing.T) {
				h, id := run("decide", "elicit_approval", string(approval))
				w.decide(id, elicitation.Submission{Decision: elicitation.DecisionSubmitted, Comment: "ship it"})
				o := outcome(h)
				sc := o["result"].(map[string]any)["structuredContent"].(map[string]any)
				if o["status"] != "completed" || sc["decision"] != "submitted" || sc["elicitationId"] != id || sc["comment"] != "ship it" {
					t.Fatalf("outcome: %v", o)
				}
			})
			t.Run("url", func(t *testing.T) {
				h, id := run("url", "elicit_selection", `{"message":"Which region?","options":[{"id":"eu"},{"id":"us"}]}`)
				var in map[string]any
				for in == nil {
					if ev := h.nextAny(); ev["event"] == "input" {
						in = ev
					}
				}
				b, _ := json.Marshal(in)
				if !strings.Contains(string(b), `"mode":"url"`) || !strings.Contains(string(b), "/review/"+id+"/") {
					t.Fatalf("input request: %s", b)
				}
				// The host reports what it did with the link before the human
				// decides (a decision first is fine too: the late answer is
				// ignored).
				for ev := h.nextAny(); ev["event"] != "wire" || ev["method"] != "tasks/update"; ev = h.nextAny() {
				}
				w.decide(id, elicitation.Submission{Decision: elicitation.DecisionSubmitted, SelectedIDs: []string{"us"}})
				o := outcome(h)
				sc := o["result"].(map[string]any)["structuredContent"].(map[string]any)
				if o["status"] != "completed" || sc["selectedIds"].([]any)[0] != "us" {
					t.Fatalf("outcome: %v", o)
				}
				// The host's answer to the link was recorded once.
				if n := w.audited(id, elicitation.ActionPushAnswered); n != 1 {
					t.Fatalf("push_answered entries: %d, want 1", n)
				}
			})
			t.Run("cancel", func(t *testing.T) {
				h, id := run("cancel", "elicit_approval", string(approval))
				if o := outcome(h); o["status"] != "cancelled" {
					t.Fatalf("outcome: %v", o)
				}
				if st, err := w.svc.Status(t.Context(), "alice", id); err != nil || st.Status != elicitation.StatusCanceled {
					t.Fatalf("request after the cancel: %v %v", st.Status, err)
				}
			})
		})
	}
}
