package mcptools_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/mcptools"
)

// ann is a person signed in with OAuth, who decides in the app on a server
// with reviewer sign-in.
var ann = elicitation.Identity{Issuer: "https://id.example/", Subject: "s-ann", Email: "ann@example.com", EmailVerified: true}

// ruleFault fails CreateRule while on.
type ruleFault struct {
	elicitation.Store
	on *atomic.Bool
}

func (f ruleFault) CreateRule(ctx context.Context, r elicitation.Rule) error {
	if f.on.Load() {
		return errors.New("rule store down")
	}
	return f.Store.CreateRule(ctx, r)
}

// TestAppStanding: with sign-in, the app's view offers a standing approval
// (the cap, the fields it holds with their values); an approval sent with
// standing makes the signed-in person's rule, which decides the next like
// request at its creation (decidedVia rule) and not one that differs in a
// held field; bad minutes or uses, or standing with a decline, are refused
// and decide nothing; a rule the store does not keep leaves the approval
// standing, and the output says so.
func TestAppStanding(t *testing.T) {
	t.Parallel()
	var fault atomic.Bool
	e := newEnv(t, envOptions{app: true, signIn: true, persons: map[string]elicitation.Identity{"tok-ann": ann},
		wrapStore: func(st elicitation.Store) elicitation.Store { return ruleFault{Store: st, on: &fault} }})
	cs := connectAppWith(t, e, true, proto20251125, "tok-ann")
	approval := func(env string) string {
		t.Helper()
		c := ok(t, cs, mcptools.ToolApproval, map[string]any{"message": "Deploy?", "context": map[string]any{"env": env, "n": 1}})
		return c["elicitationId"].(string)
	}
	view := func(id string) map[string]any {
		t.Helper()
		return ok(t, cs, mcptools.ToolAppView, map[string]any{"elicitationId": id})
	}
	decide := func(id string, args map[string]any) callResult {
		t.Helper()
		args["elicitationId"], args["renderToken"] = id, view(id)["renderToken"]
		return call(t, cs, mcptools.ToolAppDecide, args)
	}
	status := func(id string) any {
		t.Helper()
		return ok(t, cs, mcptools.ToolStatus, map[string]any{"elicitationId": id})["status"]
	}
	rules := func() []elicitation.Rule {
		t.Helper()
		rs, err := e.svc.Rules(elicitation.WithIdentity(context.Background(), ann))
		if err != nil {
			t.Fatal(err)
		}
		return rs
	}

	first := approval("staging")
	want := map[string]any{"maxMinutes": float64(24 * 60), "fields": []any{
		map[string]any{"path": []any{"env"}, "value": "staging"},
		map[string]any{"path": []any{"n"}, "value": float64(1)},
	}}
	if got := view(first)["standing"]; !jsonEqual(got, want) {
		t.Errorf("view's standing = %v, want %v", got, want)
	}
	for _, bad := range []struct {
		name string
		args map[string]any
		says string
	}{
		{"no minutes", map[string]any{"decision": "submitted", "standing": map[string]any{"minutes": 0, "uses": 10}}, "is not in the future"},
		{"past the cap", map[string]any{"decision": "submitted", "standing": map[string]any{"minutes": 24*60 + 1, "uses": 10}}, "lasts at most"},
		{"huge", map[string]any{"decision": "submitted", "standing": map[string]any{"minutes": int64(1) << 60, "uses": 10}}, "lasts at most"},
		{"hugely negative", map[string]any{"decision": "submitted", "standing": map[string]any{"minutes": -(int64(1) << 62), "uses": 10}}, "is not in the future"},
		{"no uses", map[string]any{"decision": "submitted", "standing": map[string]any{"minutes": 60, "uses": 0}}, "1 to 1000 uses"},
		{"too many uses", map[string]any{"decision": "submitted", "standing": map[string]any{"minutes": 60, "uses": 1001}}, "1 to 1000 uses"},
		{"with a decline", map[string]any{"decision": "declined", "standing": map[string]any{"minutes": 60, "uses": 10}}, "not with a decline"},
		{"unknown field", map[string]any{"decision": "submitted", "standing": map[string]any{"minutes": 60, "uses": 10, "env": "prod"}}, "invalid_argument: "},
	} {
		if r := decide(first, bad.args); !r.isError || !strings.HasPrefix(r.text, "invalid_argument: ") || !strings.Contains(r.text, bad.says) {
			t.Errorf("%s: %+v, want invalid_argument saying %q", bad.name, r, bad.says)
		}
	}
	if s := status(first); s != "pending" || len(rules()) != 0 {
		t.Fatalf("after refused standing: status %v, %d rules; want pending and none", s, len(rules()))
	}

	r := decide(first, map[string]any{"decision": "submitted", "comment": "ok", "standing": map[string]any{"minutes": 60, "uses": 10}})
	if r.isError || r.structured["status"] != "submitted" || !strings.Contains(r.structured["standing"].(string), "up to 10, for 1 hour") {
		t.Fatalf("approve with standing: %+v", r)
	}
	rs := rules()
	if len(rs) != 1 || rs[0].By != ann.Principal() || rs[0].Author.Issuer != ann.Issuer || rs[0].From != first || rs[0].MaxUses != 10 || len(rs[0].Constraints) != 2 {
		t.Fatalf("rules = %+v", rs)
	}

	like := approval("staging")
	if got := ok(t, cs, mcptools.ToolAwait, map[string]any{"elicitationId": like, "waitSeconds": 0.1}); got["status"] != "submitted" {
		t.Fatalf("a like request: await = %v", got)
	}
	res := ok(t, cs, mcptools.ToolResult, map[string]any{"elicitationId": like})
	if res["decidedVia"] != "rule" || res["decidedBy"] != ann.Principal() {
		t.Errorf("a like request's result = %v", res)
	}
	unlike := approval("prod")
	if s := status(unlike); s != "pending" {
		t.Errorf("a request differing in a held field: %v, want pending", s)
	}

	// The store does not keep the rule: the approval stands, and says so.
	fault.Store(true)
	r = decide(unlike, map[string]any{"decision": "submitted", "standing": map[string]any{"minutes": 60, "uses": 10}})
	fault.Store(false)
	if r.isError || r.structured["status"] != "submitted" || !strings.HasPrefix(r.structured["standing"].(string), "not saved: ") {
		t.Errorf("approve with a rule not saved: %+v", r)
	}
	if len(rules()) != 1 {
		t.Errorf("a rule not saved is listed: %+v", rules())
	}
}

// TestAppStandingWithoutSignIn: without sign-in the view offers no
// standing approval, and a decision sent with one is refused with the
// reason, deciding nothing.
func TestAppStandingWithoutSignIn(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{app: true})
	cs := connectApp(t, e, true)
	id := ok(t, cs, mcptools.ToolApproval, map[string]any{"message": "Deploy?", "context": map[string]any{"env": "staging"}})["elicitationId"].(string)
	view := ok(t, cs, mcptools.ToolAppView, map[string]any{"elicitationId": id})
	if _, has := view["standing"]; has {
		t.Errorf("view without sign-in offers standing: %v", view["standing"])
	}
	r := call(t, cs, mcptools.ToolAppDecide, map[string]any{"elicitationId": id, "renderToken": view["renderToken"], "decision": "submitted",
		"standing": map[string]any{"minutes": 60, "uses": 10}})
	if !r.isError || !strings.HasPrefix(r.text, "invalid_argument: ") || !strings.Contains(r.text, "need reviewer sign-in") {
		t.Errorf("standing without sign-in: %+v", r)
	}
	if s := ok(t, cs, mcptools.ToolStatus, map[string]any{"elicitationId": id})["status"]; s != "pending" {
		t.Errorf("after refused standing: %v, want pending", s)
	}
}
