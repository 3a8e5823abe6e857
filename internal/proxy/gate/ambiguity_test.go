package gate_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/proxy/gate"
)

var searchTool = gate.Tool{Name: "search_docs", Description: "Searches the docs.", Properties: map[string]json.RawMessage{"query": json.RawMessage(`{"type":"string"}`)}}

const ambiguousRefine = `tools:
  search_docs:
    ambiguous_if:
      query_min_length: 4
      generic_terms: [docs, help]
`

func TestAmbiguityTests(t *testing.T) {
	t.Parallel()
	e := newEnv(t, ambiguousRefine, nil)
	for _, tt := range []struct {
		args string
		gate bool
	}{
		{`{"query":"billing api"}`, false},
		{`{"query":"api"}`, true},     // shorter than 4
		{`{"query":"  api  "}`, true}, // trimmed
		{`{"query":"HELP"}`, true},    // generic, ignoring case
		{`{"query":"héllo"}`, false},  // 5 runes
		{`{"query":42}`, false},       // not a string: the schema's business
		{`{"other":"x"}`, false},      // absent: the required checks' business
	} {
		d := check(t, e.gate, searchTool, tt.args, nil)
		if (d.Result != nil) != tt.gate {
			t.Errorf("%s: gated = %v, want %v", tt.args, d.Result != nil, tt.gate)
		}
	}
}

func TestAmbiguityRefinedOnTheReviewPage(t *testing.T) {
	t.Parallel()
	e := newEnv(t, ambiguousRefine, nil)
	args := `{"query":"docs","limit":5}`
	p := payload(t, check(t, e.gate, searchTool, args, nil))
	if p.Error != gate.ErrorPending || strings.Join(p.MissingOrAmbiguous, ",") != "query" {
		t.Fatalf("ambiguous: %+v", p)
	}
	if pl := e.local.Payload(t, p.ReviewURL); !strings.Contains(string(pl.Schema.Raw), `"minLength":4`) {
		t.Errorf("form schema %s", pl.Schema.Raw)
	}
	e.local.Decide(t, p.ReviewURL, elicitation.DecisionSubmitted, map[string]string{"query": "billing api"})
	d := check(t, e.gate, searchTool, args, nil)
	if d.Result != nil || string(d.Args) != `{"query":"billing api","limit":5}` {
		t.Fatalf("refined: %s %+v", d.Args, d.Result)
	}
}

func TestAmbiguityStillAmbiguousAfterRefine(t *testing.T) {
	t.Parallel()
	e := newEnv(t, ambiguousRefine, nil)
	h := &host{answer: func(*mcp.ElicitParams) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"query": "help"}}, nil
	}}
	p := payload(t, check(t, e.gate, searchTool, `{"query":"docs"}`, h))
	if p.Reason != gate.ReasonAmbiguous || p.Status != gate.StatusNeeds {
		t.Errorf("%+v", p)
	}
}

const ambiguousCandidates = `tools:
  search_docs:
    ambiguous_if:
      generic_terms: [docs]
      candidates:
        tool: list_projects
        arguments: {limit: 3}
        pass: {q: query}
        items: structuredContent.projects
        id: slug
        label: name
        argument: project
`

// listProjects is an upstream candidate source; it records its calls.
type listProjects struct{ calls []string }

func (l *listProjects) call(_ context.Context, name string, args json.RawMessage) (*mcp.CallToolResult, error) {
	l.calls = append(l.calls, name+" "+string(args))
	return &mcp.CallToolResult{StructuredContent: map[string]any{"projects": []any{
		map[string]any{"slug": "billing", "name": "Billing service"},
		map[string]any{"slug": "auth", "name": "Auth <service>"},
		map[string]any{"name": "no slug: skipped"},
		map[string]any{"slug": "billing", "name": "duplicate: skipped"},
	}}}, nil
}

func TestAmbiguityPickOnTheReviewPage(t *testing.T) {
	t.Parallel()
	src := &listProjects{}
	e := newEnv(t, ambiguousCandidates, src.call)
	args := `{"query":"docs"}`
	p := payload(t, check(t, e.gate, searchTool, args, nil))
	if p.Error != gate.ErrorPending {
		t.Fatalf("%+v", p)
	}
	if len(src.calls) != 1 || src.calls[0] != `list_projects {"limit":3,"q":"docs"}` {
		t.Errorf("candidate source calls %v", src.calls)
	}
	pl := e.local.Payload(t, p.ReviewURL)
	if len(pl.Options) != 2 || pl.Options[0].Label != "Billing service" || pl.Options[1].Label != "Auth <service>" {
		t.Fatalf("options %+v", pl.Options)
	}
	e.local.Decide(t, p.ReviewURL, elicitation.DecisionSubmitted, nil, pl.Options[1].ID)
	d := check(t, e.gate, searchTool, args, nil)
	if d.Result != nil || string(d.Args) != `{"query":"docs","project":"auth"}` {
		t.Fatalf("picked: %s %+v", d.Args, d.Result)
	}
}

func TestAmbiguityPickOnTheHost(t *testing.T) {
	t.Parallel()
	src := &listProjects{}
	e := newEnv(t, ambiguousCandidates, src.call)
	h := &host{answer: func(p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"choice": "1"}}, nil
	}}
	d := check(t, e.gate, searchTool, `{"query":"docs"}`, h)
	if d.Result != nil || string(d.Args) != `{"query":"docs","project":"billing"}` {
		t.Fatalf("picked: %s %+v", d.Args, d.Result)
	}
	schema := string(h.asked[0].RequestedSchema.(json.RawMessage))
	if !strings.Contains(schema, `"oneOf":[{"const":"1","title":"Billing service"},{"const":"2","title":"Auth <service>"}]`) {
		t.Errorf("host form %s", schema)
	}
	if ids := e.local.Created(); len(ids) != 0 {
		t.Errorf("a review page was created too: %v", ids)
	}
}

func TestFillOnTheReviewPage(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "elicitation:\n  fallback_on_unsupported: review_page\n", nil)
	if !e.gate.ReviewPageFallback() {
		t.Fatal("review page fallback off")
	}
	schema := json.RawMessage(`{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}`)
	tool := gate.Tool{Name: "echo"}
	ctx := context.Background()
	res, out, err := e.gate.Fill(ctx, tool, json.RawMessage(`{}`), "Provide the message.", schema, []string{"message"})
	if err != nil || res != nil || out == nil {
		t.Fatalf("Fill = %v, %v, %v", res, out, err)
	}
	var p gate.Payload
	_ = json.Unmarshal(out.StructuredContent.(json.RawMessage), &p)
	if p.Error != gate.ErrorPending || strings.Join(p.MissingOrAmbiguous, ",") != "message" {
		t.Fatalf("%+v", p)
	}
	if c := e.local.Context(t, p.ReviewURL); c["tool"] != "echo" || c["missing"].([]any)[0] != "message" {
		t.Errorf("reviewer sees %v", c)
	}
	e.local.Decide(t, p.ReviewURL, elicitation.DecisionSubmitted, map[string]string{"message": "hello"})
	res, out, err = e.gate.Fill(ctx, tool, json.RawMessage(` { } `), "Provide the message.", schema, []string{"message"})
	if err != nil || out != nil || res.Action != "accept" || res.Content["message"] != "hello" {
		t.Fatalf("Fill after the answer = %+v, %v, %v", res, out, err)
	}
}
