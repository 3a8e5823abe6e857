package mcptools_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/mcptools"
)

// connectURL opens a 2026-07-28 session that declares URL elicitation and
// declines every push (counted in pushes).
func connectURL(t *testing.T, e *env, token string, pushes chan<- *mcp.ElicitParams) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "url-host", Version: "1"}, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}},
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			pushes <- req.Params
			return &mcp.ElicitResult{Action: "decline"}, nil
		},
	})
	tr := &mcp.StreamableClientTransport{Endpoint: e.servers[0].URL + "/mcp", HTTPClient: &http.Client{Transport: roundTrip{e: e, token: token}}, MaxRetries: -1}
	cs, err := client.Connect(context.Background(), tr, &mcp.ClientSessionOptions{ProtocolVersion: proto20260728})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// TestSessionlessPushState: a request state is bound to its elicitation,
// its principal and a short expiry, across two stateless instances that
// share only the store and the keys.
func TestSessionlessPushState(t *testing.T) {
	e := newEnv(t, envOptions{stateless: true, instances: 2, push: true, auth: map[string]string{"ta": "alice", "tb": "bob"}})
	pushes := make(chan *mcp.ElicitParams, 8)
	alice, bob := connectURL(t, e, "ta", pushes), connectURL(t, e, "tb", pushes)
	created := call(t, alice, mcptools.ToolApproval, map[string]any{"message": "m", "context": 1}).structured
	id := created["elicitationId"].(string)
	other := call(t, alice, mcptools.ToolApproval, map[string]any{"message": "n", "context": 2}).structured["elicitationId"].(string)

	if r := call(t, alice, mcptools.ToolAwait, map[string]any{"elicitationId": id, "waitSeconds": 0.2}); r.structured["status"] != "pending" {
		t.Fatalf("first await: %+v", r)
	}
	select {
	case p := <-pushes:
		if p.Mode != "url" || p.URL != created["reviewUrl"] || p.ElicitationID != id {
			t.Fatalf("push %+v", p)
		}
	default:
		t.Fatal("no push")
	}
	e.mu.Lock()
	state := e.lastState
	e.mu.Unlock()

	refused := func(who *mcp.ClientSession, id, state, want string) {
		t.Helper()
		res, err := who.CallTool(context.Background(), &mcp.CallToolParams{Name: mcptools.ToolAwait, Arguments: map[string]any{"elicitationId": id, "waitSeconds": 0.1}, RequestState: state})
		if err != nil {
			t.Fatal(err)
		}
		if got := text(res); !res.IsError || !strings.Contains(got, want) {
			t.Errorf("request state for %s: %q, want an error saying %q", id, got, want)
		}
	}
	refused(bob, id, state, "belongs to another request or another agent")
	refused(alice, other, state, "belongs to another request or another agent")
	refused(alice, id, state, "was already used")
	refused(alice, id, state+"A", "is not one this server issued")

	// A fresh state expires five minutes after it was issued.
	if r := call(t, alice, mcptools.ToolAwait, map[string]any{"elicitationId": other, "waitSeconds": 0.1}); r.structured["status"] != "pending" {
		t.Fatalf("await: %+v", r)
	}
	<-pushes
	e.mu.Lock()
	fresh := e.lastState
	e.mu.Unlock()
	e.clock.Advance(mcptools.StateTTL)
	refused(alice, other, fresh, "has expired")

	// Bob's host was never offered alice's requests, and alice's only once
	// each.
	tr, err := e.svc.OperatorAudit(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	var n int
	for _, en := range tr.Entries {
		if en.Action == elicitation.ActionPushed {
			n++
		}
	}
	if n != 1 || len(pushes) != 0 {
		t.Errorf("%d pushes recorded, %d more delivered; want 1 and 0", n, len(pushes))
	}
}

func text(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, " ")
}
