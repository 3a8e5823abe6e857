package mcptools_test

import (
	"context"
	"testing"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/mcptools"
)

// On a server with reviewer sign-in, reviewers and approvals are taken and
// elicit_result says who decided and whose approvals were counted.
func TestReviewersAndQuorum(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{stateless: true, instances: 2, signIn: true})
	cs := e.connect(t, proto20251125, "")
	c := ok(t, cs, mcptools.ToolSelection, map[string]any{
		"message": "Which?", "options": []map[string]any{{"id": "a"}, {"id": "b"}},
		"reviewers": []string{"Alice@Example.com", "group:ops"}, "approvals": 2,
	})
	id := c["elicitationId"].(string)
	key := reviewKey(t, id, c["reviewUrl"].(string))
	as := func(email string, groups ...string) context.Context {
		return elicitation.WithIdentity(context.Background(), elicitation.Identity{Issuer: "https://id.example/", Subject: "s-" + email, Email: email, EmailVerified: true, Groups: groups})
	}
	pick := func(sub string) elicitation.Submission {
		return elicitation.Submission{ID: sub, Decision: elicitation.DecisionSubmitted, SelectedIDs: []string{"b"}}
	}
	if _, err := e.svc.Submit(as("mallory@example.com"), id, key, pick("m")); elicitation.CodeOf(err) != elicitation.CodeForbidden {
		t.Fatalf("mallory: %v, want forbidden", err)
	}
	if st, err := e.svc.Submit(as("alice@example.com"), id, key, pick("a")); err != nil || st.Status != elicitation.StatusPending {
		t.Fatalf("alice: %+v, %v", st, err)
	}
	if got := ok(t, cs, mcptools.ToolStatus, map[string]any{"elicitationId": id}); got["status"] != "pending" {
		t.Fatalf("status after one of two approvals = %v", got)
	}
	fails(t, cs, mcptools.ToolResult, map[string]any{"elicitationId": id}, elicitation.CodeNotDecided)
	if _, err := e.svc.Submit(as("dave@example.com", "ops"), id, key, pick("d")); err != nil {
		t.Fatalf("dave: %v", err)
	}
	res := ok(t, cs, mcptools.ToolResult, map[string]any{"elicitationId": id})
	want := map[string]any{"status": "consumed", "decision": "submitted", "context": nil, "formSubmission": nil, "selectedIds": []any{"b"}, "comment": nil,
		"decidedBy": "dave@example.com", "decidedVia": "page", "approvedBy": []any{"alice@example.com", "dave@example.com"}}
	if !jsonEqual(res, want) {
		t.Errorf("result = %v, want %v", res, want)
	}
	audit := ok(t, cs, mcptools.ToolStatus, map[string]any{"elicitationId": id, "includeAudit": true})["audit"].(map[string]any)["entries"].([]any)
	var actions []string
	for _, a := range audit {
		m := a.(map[string]any)
		actions = append(actions, m["action"].(string)+" "+m["principal"].(string))
	}
	wantActions := []string{"created anonymous", "submission_refused mallory@example.com", "approved alice@example.com", "decided dave@example.com", "result_fetched anonymous"}
	if len(actions) != len(wantActions) {
		t.Fatalf("audit = %v, want %v", actions, wantActions)
	}
	for i := range actions {
		if actions[i] != wantActions[i] {
			t.Errorf("audit[%d] = %q, want %q", i, actions[i], wantActions[i])
		}
	}
}
