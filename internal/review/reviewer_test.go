package review_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/mcptools"
	"github.com/mcp-elicitation/elicitation/internal/review"
	"github.com/mcp-elicitation/elicitation/internal/testenv"
)

// agent is an MCP client (the official Go SDK) talking to the elicitation
// tools served beside the review page on the test server.
type agent struct {
	t  *testing.T
	e  *env
	cs *mcp.ClientSession
}

func newAgent(t *testing.T, e *env) *agent {
	t.Helper()
	srv := mcptools.New(mcptools.Options{
		Service:   e.svc,
		ReviewURL: func(_ *http.Request, id, key string) string { return e.srv.URL + review.Path(id, key) },
	})
	e.mux.Handle("/mcp", srv.Handler())
	client := mcp.NewClient(&mcp.Implementation{Name: "review-browser-test", Version: "1.0"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: e.srv.URL + "/mcp", DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return &agent{t: t, e: e, cs: cs}
}

func (a *agent) call(name string, args map[string]any) map[string]any {
	a.t.Helper()
	res, err := a.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		a.t.Fatalf("%s: %v", name, err)
	}
	if res.IsError {
		a.t.Fatalf("%s: %v", name, res.Content[0].(*mcp.TextContent).Text)
	}
	var out map[string]any
	b, _ := json.Marshal(res.StructuredContent)
	_ = json.Unmarshal(b, &out)
	return out
}

// create calls a creating tool and returns the review page's path.
func (a *agent) create(name string, args map[string]any) (id, path string) {
	a.t.Helper()
	out := a.call(name, args)
	u, err := url.Parse(out["reviewUrl"].(string))
	if err != nil {
		a.t.Fatal(err)
	}
	return out["elicitationId"].(string), u.Path
}

func optionArgs(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = map[string]any{"id": fmt.Sprintf("opt-%d", i), "label": fmt.Sprintf("Option %d", i), "domain": fmt.Sprintf("example-%d.org", i)}
	}
	return out
}

// TestBrowserReviewer walks what a reviewer does on a phone (320×640 and
// 390×844, touch, scale 2, light and dark) and on a 1280×800 desktop, with
// the requests made and read by a real MCP client: a 500-option list whose
// actions stay in view, filtered with a pick kept and sent; a declined
// selection with a comment read back through elicit_result; an approval's
// receipt; a Markdown message whose raw HTML stays text; a 2 KB context
// shown whole; templated rows that leave the frame most of a 320 px row.
// axe-core checks every page these reach.
func TestBrowserReviewer(t *testing.T) {
	testenv.Slow(t, "Chromium")
	t.Parallel()
	e := newEnv(t)
	a := newAgent(t, e)
	type check func(t *testing.T)
	var flows []flow
	var checks []check
	result := func(id string) map[string]any {
		return a.call(mcptools.ToolResult, map[string]any{"elicitationId": id})
	}

	for _, vp := range []struct{ viewport, scheme string }{{"p320", "light"}, {"p320", "dark"}, {"p390", "light"}, {"p390", "dark"}, {"d1280", "light"}} {
		id, path := a.create(mcptools.ToolSelection, map[string]any{"message": "Pick **up to three** of these 500 sites", "options": optionArgs(500), "maxSelections": 3})
		flows = append(flows, flow{"name": "long list/" + vp.viewport + "/" + vp.scheme, "viewport": vp.viewport, "scheme": vp.scheme, "do": "longList", "url": path,
			"first": "opt-3", "query": "example-42", "shown": 11, "second": "opt-421", "rule": "pick between 1 and 3 options",
			"asked": "review-browser-test 1.0", "receipt": []string{"Option 3", "Option 421"}})
		checks = append(checks, func(t *testing.T) {
			r := result(id)
			if fmt.Sprint(r["selectedIds"]) != "[opt-3 opt-421]" {
				t.Errorf("long list %s: selectedIds %v", vp, r["selectedIds"])
			}
		})
	}

	refine := "None fit: I need one near the station & under €120 <per night>"
	id, path := a.create(mcptools.ToolSelection, map[string]any{"message": "Which hotel?", "options": optionArgs(4)})
	flows = append(flows, flow{"name": "decline with a comment/p390/dark", "viewport": "p390", "scheme": "dark", "do": "comment", "url": path,
		"decision": "declined", "comment": refine + "\n", "expect": "Sent: none of these"})
	checks = append(checks, func(t *testing.T) {
		r := result(id)
		if r["decision"] != "declined" || r["comment"] != refine {
			t.Errorf("declined selection: decision %v comment %q, want declined %q", r["decision"], r["comment"], refine)
		}
	})

	aid, apath := a.create(mcptools.ToolApproval, map[string]any{"message": "Deploy api v1.3?", "context": map[string]any{"service": "api"},
		"requestedSchema": map[string]any{"type": "object", "properties": map[string]any{
			"replicas": map[string]any{"type": "integer", "title": "Replicas"},
			"env":      map[string]any{"type": "string", "title": "Environment", "oneOf": []any{map[string]any{"const": "prod", "title": "Production"}, map[string]any{"const": "stg", "title": "Staging"}}},
		}, "required": []any{"replicas"}}})
	flows = append(flows, flow{"name": "approval receipt/p320/light", "viewport": "p320", "do": "approve", "url": apath,
		"fill": map[string]string{"f.replicas": "4", "comment": "after 18:00 only"}, "select": map[string]string{"f.env": "prod"},
		"receipt": []string{"Replicas", "4", "Environment", "Production", "after 18:00 only"}})
	checks = append(checks, func(t *testing.T) {
		r := result(aid)
		if r["comment"] != "after 18:00 only" || fmt.Sprint(r["formSubmission"]) != "map[env:prod replicas:4]" {
			t.Errorf("approval: %v", r)
		}
	})

	md := "Deploy **api v1.3** to _production_?\n\n- runs `migrate up`\n- restarts 3 pods\n\n```\nkubectl rollout status\n```\n\n" +
		"See [the change](https://example.com/pr/7), not [this](javascript:alert(1)) nor ![a pixel](https://example.com/p.gif).\n\n" +
		"<b>raw</b> <img src=x onerror=alert(1)>\n\n<div><script>alert(1)</script></div>"
	_, mdPath := a.create(mcptools.ToolApproval, map[string]any{"message": md, "context": map[string]any{"x": 1}})
	for _, vp := range []string{"p320", "d1280"} {
		flows = append(flows, flow{"name": "markdown/" + vp, "viewport": vp, "do": "markdown", "url": mdPath,
			"links": []string{"https://example.com/pr/7"}, "text": []string{"<b>raw</b>", "<img src=x onerror=alert(1)>", "<script>alert(1)</script>", "a pixel", "this"}})
	}

	big := map[string]any{}
	for i := range 24 {
		big[fmt.Sprintf("step-%02d", i)] = fmt.Sprintf("run <job %d> && notify ops & dev: https://ci.example.com/jobs/%d?stage=deploy&verbose=1", i, i)
	}
	raw, _ := json.Marshal(big) // Go escapes & < > as \u0026 \u003c \u003e
	if len(raw) < 2048 || !strings.Contains(string(raw), `\u0026`) {
		t.Fatalf("context is %d bytes, escapes: %v", len(raw), strings.Contains(string(raw), `\u0026`))
	}
	ctxPage := e.approval(elicitation.Input{Message: "Run these steps?", Context: raw})
	for _, vp := range []struct{ viewport, scheme string }{{"p320", "light"}, {"p390", "dark"}} {
		flows = append(flows, flow{"name": "context 2 KB/" + vp.viewport + "/" + vp.scheme, "viewport": vp.viewport, "scheme": vp.scheme, "do": "context", "url": ctxPage.Path(),
			"text": []string{"run <job 23> && notify ops & dev", "stage=deploy&verbose=1"}, "minChars": 2000})
	}

	tpl := e.selection(elicitation.Input{Message: "Which one?", Options: guggenheim, RowTemplate: rowTpl, HoverTemplate: hoverTpl, CSS: stockCSS})
	labels := []string{"Solomon R. Guggenheim Museum", "Guggenheim Museum Bilbao", "Guggenheim Partners", "John Simon Guggenheim Memorial Foundation <Fellowships>"}
	for _, scheme := range []string{"light", "dark"} {
		flows = append(flows, flow{"name": "templated rows/p320/" + scheme, "viewport": "p320", "scheme": scheme, "do": "rowsFit", "url": tpl.Path(),
			"minShare": 0.6, "labels": labels, "role": "radio"})
	}

	// No word of the page breaks mid-way at 320 px: labels, the message,
	// the rule, the bar (ids and JSON may break anywhere; they are code).
	long := e.selection(elicitation.Input{Message: "Choose the accommodation for the Guggenheim Bilbao retrospective's installation crew", Options: guggenheim,
		MaxSelections: 2, HoverTemplate: hoverTpl, Labels: elicitation.Labels{Submit: "Book these accommodations", Decline: "Search again elsewhere"}})
	for _, scheme := range []string{"light", "dark"} {
		flows = append(flows, flow{"name": "no word broken/p320/" + scheme, "viewport": "p320", "scheme": scheme, "do": "words", "url": long.Path()})
	}

	runBrowser(t, e, flows, "")
	for _, c := range checks {
		c(t)
	}
}
