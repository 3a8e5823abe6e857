package mcptools_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/testenv"
)

// TestTypeScriptTasksClient: the TypeScript SDK 1.32.2's experimental
// tasks client (callToolStream: create, poll tasks/get, tasks/result,
// validating the result against the tool's output schema; cancelTask),
// protocol 2025-11-25, against the local default endpoint and --stateless
// with two processes.
func TestTypeScriptTasksClient(t *testing.T) {
	testenv.Slow(t, "TypeScript SDK")
	t.Parallel()
	testenv.NodeModule(t, "@modelcontextprotocol/sdk/package.json")
	approval, _ := json.Marshal(approvalArgs)
	selection := `{"message":"Which region?","options":[{"id":"eu","label":"EU"},{"id":"us","label":"US"}]}`
	for _, ep := range endpoints {
		t.Run(ep.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, ep.o)
			run := func(scenario, tool, args string) (*nodeHost, string) {
				h := startNode(t, "tscore.mjs", w.servers[0].URL+"/mcp", "tok-alice", scenario, tool, args)
				if c := h.next("connected"); c["protocolVersion"] != core || c["tasks"] == nil {
					t.Fatalf("connected: %v", c)
				}
				task := h.next("taskCreated")["task"].(map[string]any)
				return h, task["taskId"].(string)
			}
			t.Run("decide", func(t *testing.T) {
				h, id := run("decide", "elicit_approval", string(approval))
				w.decide(id, elicitation.Submission{Decision: elicitation.DecisionSubmitted, Comment: "ship it"})
				res := h.next("result")["result"].(map[string]any)
				sc := res["structuredContent"].(map[string]any)
				if sc["decision"] != "submitted" || sc["elicitationId"] != id || sc["comment"] != "ship it" || !strings.Contains(sc["reviewUrl"].(string), "/review/"+id+"/") {
					t.Fatalf("result: %v", sc)
				}
				h.next("done")
			})
			t.Run("decline", func(t *testing.T) {
				h, id := run("decide", "elicit_approval", string(approval))
				w.decide(id, elicitation.Submission{Decision: elicitation.DecisionDeclined, Comment: "use build 8"})
				sc := h.next("result")["result"].(map[string]any)["structuredContent"].(map[string]any)
				if sc["decision"] != "declined" || sc["comment"] != "use build 8" {
					t.Fatalf("result: %v", sc)
				}
			})
			t.Run("selection", func(t *testing.T) {
				h, id := run("decide", "elicit_selection", selection)
				w.decide(id, elicitation.Submission{Decision: elicitation.DecisionSubmitted, SelectedIDs: []string{"eu"}})
				sc := h.next("result")["result"].(map[string]any)["structuredContent"].(map[string]any)
				if ids := sc["selectedIds"].([]any); len(ids) != 1 || ids[0] != "eu" {
					t.Fatalf("result: %v", sc)
				}
			})
			t.Run("cancel", func(t *testing.T) {
				h, id := run("cancel", "elicit_approval", string(approval))
				if c := h.next("cancelled")["task"].(map[string]any); c["status"] != "cancelled" || c["taskId"] != id {
					t.Fatalf("cancelTask: %v", c)
				}
				if e := h.next("error"); !strings.Contains(e["message"].(string), "cancelled") {
					t.Fatalf("stream after the cancel: %v", e)
				}
				if st, err := w.svc.Status(t.Context(), "alice", id); err != nil || st.Status != elicitation.StatusCanceled {
					t.Fatalf("request after the cancel: %v %v", st.Status, err)
				}
			})
		})
	}
}

// TestTypeScriptTaskStatusNotifications: on a session, the TypeScript SDK
// 1.32.2's client receives notifications/tasks/status (its
// TaskStatusNotificationSchema) when a task ends: decided, declined and
// cancelled, each with the whole task in its final status. (--stateless
// has no session to tell.)
func TestTypeScriptTaskStatusNotifications(t *testing.T) {
	testenv.Slow(t, "TypeScript SDK")
	t.Parallel()
	testenv.NodeModule(t, "@modelcontextprotocol/sdk/package.json")
	approval, _ := json.Marshal(approvalArgs)
	w := newWorld(t, worldOptions{})
	for _, tc := range []struct {
		name, scenario string
		decide         *elicitation.Submission
		want, message  string
	}{
		{"decided", "notify", &elicitation.Submission{Decision: elicitation.DecisionSubmitted}, "completed", "answered"},
		{"declined", "notify", &elicitation.Submission{Decision: elicitation.DecisionDeclined, Comment: "no"}, "completed", "declined"},
		{"cancelled", "notify cancel", nil, "cancelled", "withdrawn"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := startNode(t, "tscore.mjs", w.servers[0].URL+"/mcp", "tok-alice", tc.scenario, "elicit_approval", string(approval))
			h.next("connected")
			id := h.next("taskCreated")["task"].(map[string]any)["taskId"].(string)
			if tc.decide != nil {
				w.decide(id, *tc.decide)
				h.next("result")
			} else {
				h.next("cancelled")
				h.next("error")
			}
			got := h.next("notified")["statuses"].([]any)
			if len(got) != 1 {
				t.Fatalf("notifications/tasks/status: %v, want one", got)
			}
			n := got[0].(map[string]any)
			if n["taskId"] != id || n["status"] != tc.want || !strings.Contains(n["statusMessage"].(string), tc.message) || n["createdAt"] == nil || n["lastUpdatedAt"] == nil || n["ttl"] == nil {
				t.Fatalf("notifications/tasks/status %v: want task %s %s", n, id, tc.want)
			}
		})
	}
}
