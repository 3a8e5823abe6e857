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

// connectApp opens a session for a host that declares the MCP Apps
// extension (ui true) or not.
func connectApp(t *testing.T, e *env, ui bool) *mcp.ClientSession {
	t.Helper()
	return connectAppAt(t, e, ui, proto20251125)
}

func connectAppAt(t *testing.T, e *env, ui bool, version string) *mcp.ClientSession {
	t.Helper()
	return connectAppWith(t, e, ui, version, "")
}

// connectAppWith is connectAppAt with a bearer token.
func connectAppWith(t *testing.T, e *env, ui bool, version, token string) *mcp.ClientSession {
	t.Helper()
	caps := &mcp.ClientCapabilities{}
	if ui {
		caps.Extensions = map[string]any{mcptools.UIExtension: map[string]any{"mimeTypes": []string{"text/html;profile=mcp-app"}}}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "app-host", Version: "1"}, &mcp.ClientOptions{Capabilities: caps})
	tr := &mcp.StreamableClientTransport{Endpoint: e.servers[0].URL + "/mcp", HTTPClient: &http.Client{Transport: roundTrip{e: e, token: token}}, MaxRetries: -1, DisableStandaloneSSE: true}
	cs, err := client.Connect(context.Background(), tr, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// TestAppDecide: the MCP App's tools are app-only, refused to a host
// without the extension; a render token decides its own request once,
// through the page's rules, recorded via app; the page's first answer
// wins over a later app decision.
func TestAppDecide(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{app: true})
	cs := connectApp(t, e, true)
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var appOnly int
	for _, tl := range tools.Tools {
		if ui, ok := tl.Meta["ui"].(map[string]any); ok && strings.Contains(strings.Join(asStrings(ui["visibility"]), ","), "app") {
			appOnly++
			if len(asStrings(ui["visibility"])) != 1 {
				t.Errorf("%s visibility %v, want [app]", tl.Name, ui["visibility"])
			}
		}
	}
	if appOnly != 2 {
		t.Errorf("%d app-only tools, want 2", appOnly)
	}

	c := ok(t, cs, mcptools.ToolSelection, map[string]any{"message": "Which?", "options": threeOptions, "minSelections": 1, "maxSelections": 2})
	id := c["elicitationId"].(string)
	view := ok(t, cs, mcptools.ToolAppView, map[string]any{"elicitationId": id})
	tok, _ := view["renderToken"].(string)
	if tok == "" || view["message"] != "Which?" || view["selectionRule"] != "pick between 1 and 2 options" || len(view["options"].([]any)) != 3 {
		t.Fatalf("view = %v", view)
	}
	decide := func(cs *mcp.ClientSession, id, tok string, args map[string]any) callResult {
		t.Helper()
		args["elicitationId"], args["renderToken"] = id, tok
		return call(t, cs, mcptools.ToolAppDecide, args)
	}
	// A host without the extension may not call the app's tools.
	if r := call(t, connectApp(t, e, false), mcptools.ToolAppView, map[string]any{"elicitationId": id}); !r.isError || !strings.HasPrefix(r.text, "forbidden: ") {
		t.Errorf("view without the extension: %+v", r)
	}
	// Bounds and option ids hold; a token for another request is refused.
	if r := decide(cs, id, tok, map[string]any{"decision": "submitted", "selectedIds": []string{"a", "b", "c"}}); !strings.Contains(r.text, "pick between 1 and 2 options; 3 were picked") {
		t.Errorf("too many: %+v", r)
	}
	other := ok(t, cs, mcptools.ToolSelection, map[string]any{"message": "Other?", "options": threeOptions})
	if r := decide(cs, other["elicitationId"].(string), tok, map[string]any{"decision": "submitted", "selectedIds": []string{"a"}}); !strings.Contains(r.text, "belongs to another request") {
		t.Errorf("foreign token: %+v", r)
	}
	if r := decide(cs, id, tok+"x", map[string]any{"decision": "submitted", "selectedIds": []string{"a"}}); !strings.Contains(r.text, "not one this server issued") {
		t.Errorf("altered token: %+v", r)
	}
	// The decision lands once; the same decision again is its retry, another is refused.
	if r := decide(cs, id, tok, map[string]any{"decision": "submitted", "selectedIds": []string{"b"}, "comment": "from the app"}); r.isError || r.structured["status"] != "submitted" {
		t.Fatalf("decide: %+v", r)
	}
	if r := decide(cs, id, tok, map[string]any{"decision": "submitted", "selectedIds": []string{"b"}, "comment": "from the app"}); r.isError {
		t.Errorf("replayed decision: %+v", r)
	}
	if r := decide(cs, id, tok, map[string]any{"decision": "declined"}); !strings.HasPrefix(r.text, "conflict: ") {
		t.Errorf("another answer from the same render: %+v", r)
	}
	res := ok(t, cs, mcptools.ToolResult, map[string]any{"elicitationId": id})
	if res["decidedVia"] != "app" || res["comment"] != "from the app" || !jsonEqual(res["selectedIds"], []any{"b"}) {
		t.Errorf("result = %v", res)
	}
	// The page answers first: the app's later decision is refused.
	oid := other["elicitationId"].(string)
	otok := ok(t, cs, mcptools.ToolAppView, map[string]any{"elicitationId": oid})["renderToken"].(string)
	e.decide(t, other, elicitation.Submission{Decision: elicitation.DecisionDeclined})
	if r := decide(cs, oid, otok, map[string]any{"decision": "submitted", "selectedIds": []string{"a"}}); !strings.HasPrefix(r.text, "conflict: ") {
		t.Errorf("app after the page: %+v", r)
	}
}

// TestAppRefusedWithSignIn: with reviewer sign-in the app never decides.
func TestAppRefusedWithSignIn(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{app: true, signIn: true})
	cs := connectApp(t, e, true)
	c := ok(t, cs, mcptools.ToolSelection, map[string]any{"message": "Which?", "options": threeOptions})
	r := call(t, cs, mcptools.ToolAppView, map[string]any{"elicitationId": c["elicitationId"]})
	if !r.isError || !strings.Contains(r.text, "this server signs reviewers in") {
		t.Errorf("view with sign-in: %+v", r)
	}
}

func asStrings(v any) []string {
	var out []string
	switch v := v.(type) {
	case []any:
		for _, x := range v {
			s, _ := x.(string)
			out = append(out, s)
		}
	case []string:
		out = v
	}
	return out
}

// TestAppResource: with the app on, the server lists and serves one
// ui:// page (MIME type and _meta.ui as ext-apps defines them: an empty
// CSP, a border), the creating tools name it in _meta.ui.resourceUri (and
// the older flat key), and elicit_app_view carries the message rendered
// as the review page renders it, the form's fields and the templates'
// names; without the app none of it appears.
func TestAppResource(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t, envOptions{app: true})
	cs := connectApp(t, e, true)
	if cs.InitializeResult().Capabilities.Resources == nil {
		t.Error("no resources capability with the app on")
	}
	list, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Resources) != 1 || list.Resources[0].URI != mcptools.AppResourceURI || list.Resources[0].MIMEType != "text/html;profile=mcp-app" {
		t.Fatalf("resources = %+v", list.Resources)
	}
	read, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: mcptools.AppResourceURI})
	if err != nil {
		t.Fatal(err)
	}
	if len(read.Contents) != 1 {
		t.Fatalf("%d contents", len(read.Contents))
	}
	c := read.Contents[0]
	if c.MIMEType != mcptools.AppMIMEType || !strings.HasPrefix(c.Text, "<!DOCTYPE html>") || !strings.Contains(c.Text, "elicit_app_decide") {
		t.Errorf("contents: %s %.60q", c.MIMEType, c.Text)
	}
	for _, bad := range []string{"<script src", "<link ", "<img", "<iframe", "fetch(", "XMLHttpRequest", "eval("} {
		if strings.Contains(c.Text, bad) {
			t.Errorf("the page contains %q: it must fetch and frame nothing", bad)
		}
	}
	ui, _ := c.Meta["ui"].(map[string]any)
	csp, _ := ui["csp"].(map[string]any)
	if ui["prefersBorder"] != true || csp == nil || len(csp["connectDomains"].([]any)) != 0 || len(csp["resourceDomains"].([]any)) != 0 {
		t.Errorf("contents _meta = %v", c.Meta)
	}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	pointing := map[string]bool{}
	for _, tl := range tools.Tools {
		if ui, ok := tl.Meta["ui"].(map[string]any); ok && ui["resourceUri"] == mcptools.AppResourceURI {
			pointing[tl.Name] = true
			if tl.Meta["ui/resourceUri"] != mcptools.AppResourceURI {
				t.Errorf("%s lacks the flat ui/resourceUri key: %v", tl.Name, tl.Meta)
			}
		}
	}
	if len(pointing) != 2 || !pointing[mcptools.ToolApproval] || !pointing[mcptools.ToolSelection] {
		t.Errorf("tools naming the page: %v", pointing)
	}

	msg := "Ship **v2**?\n<script>alert(1)</script> [docs](javascript:alert(1))"
	a := ok(t, cs, mcptools.ToolApproval, map[string]any{"message": msg, "context": map[string]any{"v": 2},
		"requestedSchema": map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "integer", "minimum": 1, "maximum": 5}}, "required": []string{"n"}}})
	view := ok(t, cs, mcptools.ToolAppView, map[string]any{"elicitationId": a["elicitationId"]})
	html, _ := view["messageHtml"].(string)
	if !strings.Contains(html, "<strong>v2</strong>") || strings.Contains(html, "<script") || !strings.Contains(html, "&lt;script&gt;") || strings.Contains(html, "href") {
		t.Errorf("messageHtml = %q", html)
	}
	fields, _ := view["formFields"].([]any)
	if len(fields) != 1 || fields[0].(map[string]any)["name"] != "n" || fields[0].(map[string]any)["maximum"] != 5.0 || view["createdAt"] == "" {
		t.Errorf("view = %v", view)
	}
	sel := ok(t, cs, mcptools.ToolSelection, map[string]any{"message": "Which?", "options": threeOptions, "rowTemplate": "<b>{{ option.label }}</b>"})
	view = ok(t, cs, mcptools.ToolAppView, map[string]any{"elicitationId": sel["elicitationId"]})
	if !jsonEqual(view["templated"], []any{"rowTemplate"}) || strings.Contains(string(mustJSON(t, view)), "<b>") {
		t.Errorf("templated view = %v", view)
	}

	off := connectApp(t, newEnv(t, envOptions{}), true)
	if off.InitializeResult().Capabilities.Resources != nil {
		t.Error("resources capability with the app off")
	}
	tools, err = off.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools.Tools {
		if tl.Meta != nil {
			t.Errorf("%s has _meta with the app off: %v", tl.Name, tl.Meta)
		}
	}
}

// TestAppStateless: on a stateless deployment (Lambda) a session-era
// host's capabilities never reach the process serving a call, so the app's
// tools answer it; a 2026-07-28 call carries them and is checked.
func TestAppStateless(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{app: true, stateless: true})
	cs := connectApp(t, e, false)
	c := ok(t, cs, mcptools.ToolSelection, map[string]any{"message": "Which?", "options": threeOptions})
	id := c["elicitationId"].(string)
	view := ok(t, cs, mcptools.ToolAppView, map[string]any{"elicitationId": id})
	r := call(t, cs, mcptools.ToolAppDecide, map[string]any{"elicitationId": id, "renderToken": view["renderToken"], "decision": "submitted", "selectedIds": []string{"c"}})
	if r.isError || r.structured["status"] != "submitted" {
		t.Fatalf("decide: %+v", r)
	}
	if res := ok(t, cs, mcptools.ToolResult, map[string]any{"elicitationId": id}); res["decidedVia"] != "app" {
		t.Errorf("result = %v", res)
	}
	for _, ui := range []bool{false, true} {
		cs := connectAppAt(t, e, ui, proto20260728)
		if v := cs.InitializeResult().ProtocolVersion; v != proto20260728 {
			t.Fatalf("negotiated %s", v)
		}
		c := ok(t, cs, mcptools.ToolSelection, map[string]any{"message": "Which?", "options": threeOptions})
		r := call(t, cs, mcptools.ToolAppView, map[string]any{"elicitationId": c["elicitationId"]})
		if refused := r.isError && strings.HasPrefix(r.text, "forbidden: "); refused == ui {
			t.Errorf("2026-07-28, extension declared %v: %+v", ui, r)
		}
	}
}
