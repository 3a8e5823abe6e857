package plan

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/proxy/config"
)

// The tests in this file port the Python original's policy tests
// (test_schema_required_policy.py, test_sensitive_required_policy.py,
// test_pipeline_config.py, test_error_payloads.py,
// test_elicitation_builder.py, test_middleware_elicitation_config.py) to the
// planner: the same schemas, arguments and configurations, the same
// expected fields, reasons and payload values.

func planner(t *testing.T, yaml string) *Planner {
	t.Helper()
	cfg, err := config.ParseWith([]byte("upstream:\n  url: http://localhost:8001/mcp\n"+yaml), config.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return New(cfg)
}

func tool(t *testing.T, name, schema string) *Tool {
	t.Helper()
	if schema == "" {
		return nil
	}
	tl, err := ParseTool(json.RawMessage(`{"name":"` + name + `","inputSchema":` + schema + `}`))
	if err != nil {
		t.Fatal(err)
	}
	return tl
}

func call(t *testing.T, name, schema, args string, form bool) *Call {
	t.Helper()
	return &Call{Name: name, Tool: tool(t, name, schema), Args: ParseArgs(json.RawMessage(args)), Client: Client{Form: form}}
}

const policySchema = `{"type":"object","properties":{"query":{"type":"string"},"project":{"type":"string"},"scope":{"type":"string"},"tags":{"type":"array"},"metadata":{"type":"object"},"include_archived":{"type":"boolean"},"limit":{"type":"integer"}},"required":%s}`

func schemaWith(required string) string { return strings.Replace(policySchema, "%s", required, 1) }

// TestSchemaRequired ports test_schema_required_policy.py.
func TestSchemaRequired(t *testing.T) {
	t.Parallel()
	pl := planner(t, "")
	tests := []struct {
		name, schema, args string
		missing            []string
	}{
		{"no schema", "", `{"query":"x"}`, nil},
		{"no required fields", `{"type":"object","properties":{}}`, `{}`, nil},
		{"present", schemaWith(`["query","project"]`), `{"query":"api auth flow","project":"mcp-bridge"}`, nil},
		{"missing", schemaWith(`["query","project"]`), `{"query":"api auth flow"}`, []string{"project"}},
		{"empty string", schemaWith(`["query","project"]`), `{"query":"","project":"mcp-bridge"}`, []string{"query"}},
		{"white space", schemaWith(`["query","project"]`), `{"query":"   ","project":"mcp-bridge"}`, []string{"query"}},
		{"null", schemaWith(`["query","project"]`), `{"query":"api auth flow","project":null}`, []string{"project"}},
		{"empty list and object", schemaWith(`["tags","metadata"]`), `{"tags":[],"metadata":{}}`, []string{"tags", "metadata"}},
		{"non-empty list and object", schemaWith(`["tags","metadata"]`), `{"tags":["release"],"metadata":{"owner":"docs"}}`, nil},
		{"false and zero", schemaWith(`["include_archived","limit"]`), `{"include_archived":false,"limit":0}`, nil},
		{"order", schemaWith(`["query","project","scope"]`), `{}`, []string{"query", "project", "scope"}},
		{"required not a list", `{"type":"object","required":"query"}`, `{}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := call(t, "any_tool", tt.schema, tt.args, true)
			before, _ := c.Args.MarshalJSON()
			p := pl.Plan(c)
			if !reflect.DeepEqual(p.Missing, tt.missing) {
				t.Errorf("missing %q, want %q", p.Missing, tt.missing)
			}
			if want := Forward; tt.missing != nil {
				if p.Action == want {
					t.Errorf("plan %v for an incomplete call", p.Action)
				}
			} else if p.Action != want || p.Args != nil {
				t.Errorf("plan %v (args %s), want an untouched forward", p.Action, p.Args)
			}
			if after, _ := c.Args.MarshalJSON(); string(after) != string(before) {
				t.Errorf("arguments changed: %s -> %s", before, after)
			}
		})
	}
}

// TestSensitiveRequired ports test_sensitive_required_policy.py's calls.
func TestSensitiveRequired(t *testing.T) {
	t.Parallel()
	pl := planner(t, "")
	tests := []struct {
		name, schema, args string
		blocked            []string
	}{
		{"name", `{"type":"object","properties":{"query":{"type":"string"},"api_key":{"type":"string"}},"required":["query","api_key"]}`, `{"query":"docs"}`, []string{"api_key"}},
		{"description", `{"type":"object","properties":{"query":{"type":"string"},"auth":{"type":"string","description":"Bearer token used for the upstream request."}},"required":["query","auth"]}`, `{"query":"docs"}`, []string{"auth"}},
		{"title", `{"type":"object","properties":{"query":{"type":"string"},"auth":{"type":"string","title":"Private key"}},"required":["query","auth"]}`, `{"query":"docs"}`, []string{"auth"}},
		{"not sensitive", `{"type":"object","properties":{"query":{"type":"string"},"project":{"type":"string"}},"required":["query","project"]}`, `{"query":"docs"}`, nil},
		{"present", `{"type":"object","properties":{"query":{"type":"string"},"access_token":{"type":"string"}},"required":["query","access_token"]}`, `{"query":"docs","access_token":"already-provided"}`, nil},
		{"card", `{"type":"object","properties":{"amount":{"type":"integer"},"source":{"type":"string","description":"Card to charge"}},"required":["amount","source"]}`, `{"amount":5}`, []string{"source"}},
		{"only the sensitive ones", `{"type":"object","properties":{"name":{"type":"string"},"payment_method":{"type":"string"},"card_number":{"type":"string"}},"required":["name","payment_method","card_number"]}`, `{}`, []string{"payment_method", "card_number"}},
		{"scorecard is not", `{"type":"object","properties":{"scorecard":{"type":"string"},"cardinality":{"type":"integer"}},"required":["scorecard","cardinality"]}`, `{}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := pl.Plan(call(t, "any_tool", tt.schema, tt.args, true))
			if tt.blocked == nil {
				if p.Action == Block && p.Outcome.Reason == ReasonSensitive {
					t.Errorf("blocked as sensitive: %+v", p.Outcome)
				}
				return
			}
			if p.Action != Block || p.Outcome.Error != "tool_call_blocked" || p.Outcome.Status != "reject" ||
				p.Outcome.Reason != "sensitive_required_field" || !reflect.DeepEqual(p.Outcome.MissingOrAmbiguous, tt.blocked) {
				t.Errorf("plan %v, outcome %+v; want a sensitive block of %q", p.Action, p.Outcome, tt.blocked)
			}
		})
	}
}

// TestPipelineConfig ports test_pipeline_config.py: configured required
// fields, their order after the schema's, schema_required off, and the
// sensitive policy running first (and off).
func TestPipelineConfig(t *testing.T) {
	t.Parallel()
	apiKeySchema := `{"type":"object","properties":{"query":{"type":"string"},"api_key":{"type":"string"}}}`
	tests := []struct {
		name, yaml, tool, schema, args string
		action                         Action
		reason                         string
		fields                         []string
	}{
		{"configured required", "tools:\n  search_docs:\n    required: [project]\n", "search_docs", "", `{"query":"docs"}`, Elicit, "", []string{"project"}},
		{"combined in order", "tools:\n  search_docs:\n    required: [project, query, scope]\n", "search_docs",
			`{"type":"object","properties":{"query":{"type":"string"},"project":{"type":"string"},"scope":{"type":"string"}},"required":["query"]}`, `{}`, Elicit, "", []string{"query", "project", "scope"}},
		{"schema_required off", "policies:\n  schema_required:\n    enabled: false\ntools:\n  search_docs:\n    required: [project]\n", "search_docs",
			`{"type":"object","required":["query","project"]}`, `{"query":"docs"}`, Forward, "", nil},
		{"sensitive first", "tools:\n  sync_repository:\n    required: [api_key]\n", "sync_repository", apiKeySchema, `{"query":"release notes"}`, Block, ReasonSensitive, []string{"api_key"}},
		{"sensitive off", "policies:\n  sensitive_required:\n    enabled: false\ntools:\n  sync_repository:\n    required: [api_key]\n", "sync_repository", apiKeySchema, `{"query":"release notes"}`, Elicit, "", []string{"api_key"}},
		{"schema_required off, sensitive still sees schema fields", "policies:\n  schema_required:\n    enabled: false\n", "deploy",
			`{"type":"object","properties":{"service":{"type":"string"},"api_key":{"type":"string"}},"required":["service","api_key"]}`, `{}`, Block, ReasonSensitive, []string{"api_key"}},
		{"original marker list replaces the defaults", "policies:\n  sensitive_required:\n    sensitive_name_markers: [message]\n", "echo",
			`{"type":"object","properties":{"message":{"type":"string"},"token":{"type":"string"}},"required":["message"]}`, `{}`, Block, ReasonSensitive, []string{"message"}},
		{"replaced defaults no longer match", "policies:\n  sensitive_required:\n    sensitive_name_markers: [message]\n    sensitive_schema_markers: [message]\n", "deploy",
			`{"type":"object","properties":{"api_key":{"type":"string"}},"required":["api_key"]}`, `{}`, Elicit, "", []string{"api_key"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := planner(t, tt.yaml).Plan(call(t, tt.tool, tt.schema, tt.args, true))
			if p.Action != tt.action {
				t.Fatalf("plan %v, want %v (%+v)", p.Action, tt.action, p.Outcome)
			}
			switch p.Action {
			case Block:
				if p.Outcome.Reason != tt.reason || !reflect.DeepEqual(p.Outcome.MissingOrAmbiguous, tt.fields) {
					t.Errorf("outcome %+v, want %s on %q", p.Outcome, tt.reason, tt.fields)
				}
			case Elicit:
				if got := p.Form.Names(); !reflect.DeepEqual(got, tt.fields) {
					t.Errorf("form asks for %q, want %q", got, tt.fields)
				}
			case Forward:
				if p.Args != nil {
					t.Errorf("forward with changed arguments %s", p.Args)
				}
			}
		})
	}
}

// TestPayloads ports test_error_payloads.py and the payloads the
// original's middleware tests expect: every value but the message.
func TestPayloads(t *testing.T) {
	t.Parallel()
	pl := planner(t, "")
	pd := planner(t, "elicitation:\n  enabled: false\n")
	ticket := `{"type":"object","properties":{"ticket_id":{"type":"string"},"project":{"type":"string"}},"required":["ticket_id","project"]}`
	secret := `{"type":"object","properties":{"name":{"type":"string"},"api_key":{"type":"string"},"token":{"type":"string"}},"required":["name","api_key","token"]}`
	form := pl.Plan(call(t, "lookup_ticket", ticket, `{"ticket_id":"OPS-123"}`, true))
	if form.Action != Elicit {
		t.Fatalf("plan %v", form.Action)
	}
	c := call(t, "lookup_ticket", ticket, `{"ticket_id":"OPS-123"}`, true)
	tests := []struct {
		name string
		p    Plan
		want Outcome
	}{
		{"disabled", pd.Plan(call(t, "search_docs", ticket, `{"ticket_id":"OPS-123"}`, true)),
			Outcome{Error: "elicitation_required", Tool: "search_docs", Status: "needs_elicitation", Reason: "elicitation_disabled", MissingOrAmbiguous: []string{"project"}}},
		{"unsupported", pl.Plan(call(t, "lookup_ticket", ticket, `{"ticket_id":"OPS-123"}`, false)),
			Outcome{Error: "elicitation_required", Tool: "lookup_ticket", Status: "needs_elicitation", Reason: "elicitation_unsupported", MissingOrAmbiguous: []string{"project"}}},
		{"declined", pl.Answered(c, form.Form, &mcp.ElicitResult{Action: "decline"}),
			Outcome{Error: "elicitation_required", Tool: "lookup_ticket", Status: "needs_elicitation", Reason: "elicitation_declined", MissingOrAmbiguous: []string{"project"}}},
		{"cancelled", pl.Answered(c, form.Form, &mcp.ElicitResult{Action: "cancel"}),
			Outcome{Error: "elicitation_required", Tool: "lookup_ticket", Status: "needs_elicitation", Reason: "elicitation_cancelled", MissingOrAmbiguous: []string{"project"}}},
		{"failed", pl.Failed(c, "client does not support elicitation"),
			Outcome{Error: "elicitation_required", Tool: "lookup_ticket", Status: "needs_elicitation", Reason: "elicitation_failed", MissingOrAmbiguous: []string{"project"}}},
		{"still missing", pl.Answered(c, form.Form, &mcp.ElicitResult{Action: "accept", Content: map[string]any{"project": "   "}}),
			Outcome{Error: "tool_call_blocked", Tool: "lookup_ticket", Status: "needs_elicitation", Reason: "required_fields_missing_or_empty", MissingOrAmbiguous: []string{"project"}}},
		{"sensitive", pl.Plan(call(t, "save_secret", secret, `{"name":"github"}`, true)),
			Outcome{Error: "tool_call_blocked", Tool: "save_secret", Status: "reject", Reason: "sensitive_required_field", MissingOrAmbiguous: []string{"api_key", "token"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.p.Action != Block {
				t.Fatalf("plan %v", tt.p.Action)
			}
			got := *tt.p.Outcome
			if got.Message == "" || !strings.Contains(got.Message, tt.want.Tool) {
				t.Errorf("message %q does not name the tool", got.Message)
			}
			got.Message = ""
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("outcome\n got %+v\nwant %+v", got, tt.want)
			}
			res := tt.p.Outcome.Result()
			if res.IsError {
				t.Error("isError set: the original returns an ordinary tool result")
			}
			var fromText, structured map[string]any
			json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &fromText)
			json.Unmarshal(res.StructuredContent.(json.RawMessage), &structured)
			if !reflect.DeepEqual(fromText, structured) || len(structured) != 6 {
				t.Errorf("text %v and structured content %v differ", fromText, structured)
			}
			if keys := string(res.StructuredContent.(json.RawMessage)); !ordered(keys, "error", "tool", "status", "reason", "missing_or_ambiguous", "message") {
				t.Errorf("keys out of the original's order: %s", keys)
			}
		})
	}
}

func ordered(s string, keys ...string) bool {
	at := 0
	for _, k := range keys {
		i := strings.Index(s[at:], `"`+k+`":`)
		if i < 0 {
			return false
		}
		at += i
	}
	return true
}

// TestForm ports test_elicitation_builder.py and the merge of
// test_middleware_elicitation_config.py.
func TestForm(t *testing.T) {
	t.Parallel()
	schema := `{"type":"object","properties":{"query":{"type":"string"},"project":{"type":"string"},"ticket_id":{"type":"string"}},"required":["ticket_id","project"]}`
	t.Run("configured message", func(t *testing.T) {
		p := planner(t, "tools:\n  search_docs:\n    elicit:\n      message: In quale progetto devo cercare?\n").Plan(call(t, "search_docs", schema, `{"ticket_id":"OPS-123"}`, true))
		if p.Form.Params.Message != "In quale progetto devo cercare?" {
			t.Errorf("message %q", p.Form.Params.Message)
		}
	})
	t.Run("default message names the tool", func(t *testing.T) {
		p := planner(t, "").Plan(call(t, "search_docs", schema, `{"ticket_id":"OPS-123"}`, true))
		if !strings.Contains(p.Form.Params.Message, "search_docs") {
			t.Errorf("message %q", p.Form.Params.Message)
		}
	})
	t.Run("configured type and description, only missing fields, in order", func(t *testing.T) {
		p := planner(t, `tools:
  search_docs:
    required: [query]
    elicit:
      fields:
        project:
          type: integer
          description: Progetto o scope in cui cercare
        ticket_id:
          description: Ticket
`).Plan(call(t, "search_docs", schema, `{"ticket_id":"OPS-1"}`, true))
		got, _ := json.Marshal(p.Form.Params.RequestedSchema)
		want := `{"type":"object","properties":{"project":{"type":"integer","description":"Progetto o scope in cui cercare"},"query":{"type":"string"}},"required":["project","query"]}`
		if string(got) != want {
			t.Errorf("requestedSchema\n got %s\nwant %s", got, want)
		}
	})
	t.Run("accept merges only the asked fields", func(t *testing.T) {
		pl := planner(t, "")
		c := call(t, "search_docs", schema, `{"ticket_id":"OPS-123","query":"keep me"}`, true)
		p := pl.Plan(c)
		got := pl.Answered(c, p.Form, &mcp.ElicitResult{Action: "accept", Content: map[string]any{"project": "ops", "query": "do not merge"}})
		if got.Action != Forward || string(got.Args) != `{"ticket_id":"OPS-123","query":"keep me","project":"ops"}` {
			t.Errorf("plan %v args %s", got.Action, got.Args)
		}
		if orig, _ := c.Args.MarshalJSON(); string(orig) != `{"ticket_id":"OPS-123","query":"keep me"}` {
			t.Errorf("the call's own arguments changed: %s", orig)
		}
	})
}

// TestGate checks that a gate sees the planner's plan and may replace it.
func TestGate(t *testing.T) {
	t.Parallel()
	pl := planner(t, "")
	var seen []Action
	pl.Use(func(c *Call, p Plan) Plan {
		seen = append(seen, p.Action)
		if c.Name == "delete" {
			return Plan{Action: Block, Outcome: &Outcome{Error: "tool_call_blocked", Tool: c.Name, Status: "reject", Reason: "confirmation_required"}}
		}
		return p
	})
	if p := pl.Plan(call(t, "delete", `{"type":"object"}`, `{}`, true)); p.Action != Block || p.Outcome.Reason != "confirmation_required" {
		t.Errorf("gate not applied: %+v", p)
	}
	if p := pl.Plan(call(t, "echo", `{"type":"object"}`, `{}`, true)); p.Action != Forward {
		t.Errorf("gate changed another call: %+v", p)
	}
	if !reflect.DeepEqual(seen, []Action{Forward, Forward}) {
		t.Errorf("gate saw %v", seen)
	}
}
