package mcptools_test

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/mcptools"
	"github.com/mcp-elicitation/elicitation/internal/mcptools/tasktest"
)

// appElicitCaps are a host's capabilities that render MCP Apps and, with
// nested, app-rendered elicitations (SEP-3118): form elicitation and the
// ui extension's nested elicitation object.
func appElicitCaps(nested bool) *mcp.ClientCapabilities {
	ui := map[string]any{"mimeTypes": []string{mcptools.AppMIMEType}}
	if nested {
		ui["elicitation"] = map[string]any{}
	}
	return &mcp.ClientCapabilities{
		Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}},
		Extensions:  map[string]any{mcptools.UIExtension: ui},
	}
}

// appRenderedMeta fails t unless p names the app's page and request id.
func appRenderedMeta(t *testing.T, p *mcp.ElicitParams, id string) {
	t.Helper()
	ui, _ := p.Meta["ui"].(map[string]any)
	if p.Mode != "form" || ui["resourceUri"] != mcptools.AppResourceURI || p.Meta["elicitationId"] != id {
		t.Errorf("app-rendered elicitation of %s: mode %q, _meta %v", id, p.Mode, p.Meta)
	}
}

// TestAppElicitationOnSession: with the MCP App on, the server declares
// elicitation inside its ui extension; a session host that declares it too
// is asked by elicit_await, without askInHost, a form elicitation naming
// the app's page and the request in _meta; its answer lands under the
// page's rules (via host-form: the server cannot tell the app from the
// host's fallback form), an answer outside the form is refused and decides
// nothing. A host without the nested capability, and a deployment with
// reviewer sign-in, are asked nothing.
func TestAppElicitationOnSession(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{app: true})
	cs, host := connectFormHostWith(t, e, proto20251125, true, appElicitCaps(true))
	ui, _ := cs.InitializeResult().Capabilities.Extensions[mcptools.UIExtension].(map[string]any)
	if el, ok := ui["elicitation"].(map[string]any); !ok || len(el) != 0 {
		t.Fatalf("server capabilities: extensions %v, want %s with elicitation {}", cs.InitializeResult().Capabilities.Extensions, mcptools.UIExtension)
	}

	c := ok(t, cs, mcptools.ToolSelection, map[string]any{"message": "Which?", "options": threeOptions, "maxSelections": 2})
	id := c["elicitationId"].(string)
	if c["hostForm"] != nil {
		t.Errorf("hostForm without askInHost: %v", c["hostForm"])
	}
	host.answers <- &mcp.ElicitResult{Action: "accept", Content: map[string]any{"selection": []any{"b"}, "comment": "from the app"}}
	if got := ok(t, cs, mcptools.ToolAwait, map[string]any{"elicitationId": id}); got["status"] != "submitted" {
		t.Fatalf("await = %v", got)
	}
	form := host.form(t)
	appRenderedMeta(t, form, id)
	if sel, _ := schemaOf(t, form)["properties"].(map[string]any)["selection"].(map[string]any); sel["maxItems"] != 2.0 {
		t.Errorf("the form's selection = %v", sel)
	}
	want := map[string]any{"status": "consumed", "decision": "submitted", "context": nil, "formSubmission": nil, "selectedIds": []any{"b"}, "comment": "from the app", "decidedBy": nil, "decidedVia": "host-form"}
	if res := ok(t, cs, mcptools.ToolResult, map[string]any{"elicitationId": id}); !jsonEqual(res, want) {
		t.Errorf("result = %v, want %v", res, want)
	}

	// An answer outside the form decides nothing.
	a := ok(t, cs, mcptools.ToolApproval, map[string]any{"message": "Scale?", "requestedSchema": map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "integer", "maximum": 5}}, "required": []string{"n"}}})
	host.answers <- &mcp.ElicitResult{Action: "accept", Content: map[string]any{"n": 9}}
	if r := call(t, cs, mcptools.ToolAwait, map[string]any{"elicitationId": a["elicitationId"], "waitSeconds": 0.5}); !r.isError {
		t.Errorf("await after an answer outside the form = %+v", r)
	}
	appRenderedMeta(t, host.form(t), a["elicitationId"].(string))
	if st := ok(t, cs, mcptools.ToolStatus, map[string]any{"elicitationId": a["elicitationId"]}); st["status"] != "pending" {
		t.Errorf("an answer outside the form decided: %v", st)
	}

	// A host that also declares URL elicitation (the Inspector 2.x web
	// client) is not pushed the link on its session at creation, which
	// would take the request's one offer: the first elicit_await offers it
	// the app.
	both := appElicitCaps(true)
	both.Elicitation.URL = &mcp.URLElicitationCapabilities{}
	cs, host = connectFormHostWith(t, newEnv(t, envOptions{app: true, push: true}), proto20251125, true, both)
	c = ok(t, cs, mcptools.ToolApproval, map[string]any{"message": "Ship?", "context": map[string]any{"build": 8}})
	host.answers <- &mcp.ElicitResult{Action: "accept", Content: map[string]any{"comment": "go"}}
	if got := ok(t, cs, mcptools.ToolAwait, map[string]any{"elicitationId": c["elicitationId"], "waitSeconds": 5}); got["status"] != "submitted" {
		t.Fatalf("await, host with URL elicitation = %v", got)
	}
	appRenderedMeta(t, host.form(t), c["elicitationId"].(string))
	if len(host.shown) != 0 {
		t.Errorf("shown besides the app: %v", <-host.shown)
	}

	for name, tc := range map[string]struct {
		o    envOptions
		caps *mcp.ClientCapabilities
	}{
		"no nested capability": {envOptions{app: true}, appElicitCaps(false)},
		"app off":              {envOptions{}, appElicitCaps(true)},
		"sign-in":              {envOptions{app: true, signIn: true}, appElicitCaps(true)},
	} {
		cs, host := connectFormHostWith(t, newEnv(t, tc.o), proto20251125, true, tc.caps)
		c := ok(t, cs, mcptools.ToolSelection, map[string]any{"message": "Which?", "options": threeOptions})
		if got := ok(t, cs, mcptools.ToolAwait, map[string]any{"elicitationId": c["elicitationId"], "waitSeconds": 0.1}); got["status"] != "pending" || len(host.shown) != 0 {
			t.Errorf("%s: await = %v, %d forms shown", name, got, len(host.shown))
		}
	}
}

// TestAppElicitationSessionless: on 2026-07-28, across two stateless
// instances, elicit_await's input-required result carries the
// app-rendered elicitation; an answer outside the form is refused and
// decides nothing, the good one lands once. A host without the nested
// capability, asking in the host, gets today's form, with no _meta.
func TestAppElicitationSessionless(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{stateless: true, instances: 2, app: true, hostForm: true})
	cs, _ := connectFormHostWith(t, e, proto20260728, false, appElicitCaps(true))
	offer := func(cs *mcp.ClientSession, args map[string]any) (string, *mcp.ElicitParams, string) {
		t.Helper()
		id := ok(t, cs, mcptools.ToolSelection, args)["elicitationId"].(string)
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: mcptools.ToolAwait, Arguments: map[string]any{"elicitationId": id}})
		if err != nil {
			t.Fatal(err)
		}
		p, _ := res.InputRequests["hostForm"].(*mcp.ElicitParams)
		if !res.NeedsInput() || p == nil || res.RequestState == "" {
			t.Fatalf("first await: %+v", res)
		}
		return id, p, res.RequestState
	}
	id, p, state := offer(cs, map[string]any{"message": "Which?", "options": threeOptions})
	appRenderedMeta(t, p, id)
	res, err := answerInHost(cs, id, state, &mcp.ElicitResult{Action: "accept", Content: map[string]any{"selection": "zzz"}})
	if err != nil || !res.IsError || !strings.Contains(text(res), `"zzz" is not one of the options`) {
		t.Fatalf("answer outside the form: %q, %v", text(res), err)
	}
	if st := ok(t, cs, mcptools.ToolStatus, map[string]any{"elicitationId": id}); st["status"] != "pending" {
		t.Fatalf("an answer outside the form decided: %v", st)
	}
	res, err = answerInHost(cs, id, state, &mcp.ElicitResult{Action: "accept", Content: map[string]any{"selection": "c"}})
	if err != nil || res.IsError || !strings.Contains(text(res), `"submitted"`) {
		t.Fatalf("good answer: %q, %v", text(res), err)
	}
	if r := ok(t, cs, mcptools.ToolResult, map[string]any{"elicitationId": id}); !jsonEqual(r["selectedIds"], []any{"c"}) || r["decidedVia"] != "host-form" {
		t.Errorf("result = %v", r)
	}

	plain, _ := connectFormHostWith(t, e, proto20260728, false, appElicitCaps(false))
	_, p, _ = offer(plain, map[string]any{"message": "Which?", "options": threeOptions, "askInHost": true})
	if p.Meta != nil {
		t.Errorf("the host form for a host without the nested capability has _meta %v", p.Meta)
	}
}

// TestExtAppElicitation: a 2026-07-28 task's input request, for a host
// that negotiated app-rendered elicitations, is the app-rendered
// elicitation (no askInHost needed); tasks/update with an answer outside
// the form is refused and leaves it outstanding, the good answer decides
// the task.
func TestExtAppElicitation(t *testing.T) {
	t.Parallel()
	caps := appElicitCaps(true)
	caps.Extensions["io.modelcontextprotocol/tasks"] = map[string]any{}
	for _, ep := range endpoints {
		t.Run(ep.name, func(t *testing.T) {
			o := ep.o
			o.app = true
			w := newWorld(t, o)
			c := w.connect("tok-alice", ext, -1, caps)
			id := startExt(t, c, "elicit_selection", map[string]any{"message": "Which?", "options": threeOptions})
			got := c.Must("tasks/get", id)
			f, _ := got["inputRequests"].(map[string]any)["hostForm"].(map[string]any)
			p, _ := f["params"].(map[string]any)
			meta, _ := p["_meta"].(map[string]any)
			ui, _ := meta["ui"].(map[string]any)
			if got["status"] != "input_required" || p["mode"] != "form" || ui["resourceUri"] != mcptools.AppResourceURI || meta["elicitationId"] != id {
				t.Fatalf("tasks/get: %v", got)
			}
			if _, e := c.Do("tasks/update", id, map[string]any{"hostForm": map[string]any{"action": "accept", "content": map[string]any{"selection": "zzz"}}}); e == nil || e.Code != jsonrpc.CodeInvalidParams {
				t.Fatalf("tasks/update outside the form: %v, want invalid params", e)
			}
			if got := c.Must("tasks/get", id); got["status"] != "input_required" {
				t.Fatalf("tasks/get after a refused answer: %v", got)
			}
			if _, e := c.Do("tasks/update", id, map[string]any{"hostForm": map[string]any{"action": "accept", "content": map[string]any{"selection": "a"}}}); e != nil {
				t.Fatalf("tasks/update: %v", e)
			}
			got = c.Must("tasks/get", id)
			if sc := tasktest.Structured(t, got["result"].(map[string]any)); got["status"] != "completed" || !jsonEqual(sc["selectedIds"], []any{"a"}) || sc["decidedVia"] != "host-form" {
				t.Fatalf("tasks/get after the answer: %v", got)
			}
		})
	}
}
