package config

import (
	"reflect"
	"strings"
	"testing"
)

const gateConfig = `upstream:
  command: node
elicitation:
  fallback_on_unsupported: review_page
elicitation_service:
  url: http://127.0.0.1:8080/mcp
  api_key_env: ELICITATION_API_KEY
  wait_seconds: 15
policies:
  confirm_destructive:
    enabled: true
tools:
  delete_file:
    confirm_if:
      always: false
      message: "Delete this file?"
      arguments:
        - field: path
          matches: "^/etc/"
        - field: size
          above: 10
          below: 100
        - field: env
          equals: [prod, 3]
        - field: force
          present: true
  search_docs:
    ambiguous_if:
      query_min_length: 3
      generic_terms: [docs, help]
      candidates:
        tool: list_projects
        arguments: {limit: 5}
        pass: {q: query}
        items: structuredContent.projects
        id: slug
        label: name
`

func TestParseGate(t *testing.T) {
	t.Parallel()
	cfg, err := Parse([]byte(gateConfig))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Elicitation.FallbackOnUnsupported != FallbackReviewPage || !cfg.Policies.ConfirmDestructive.Enabled {
		t.Errorf("elicitation %+v, policies %+v", cfg.Elicitation, cfg.Policies)
	}
	want := &ElicitationService{URL: "http://127.0.0.1:8080/mcp", APIKeyEnv: "ELICITATION_API_KEY", WaitSeconds: 15, TimeoutSeconds: DefaultTimeoutSeconds, Line: 6}
	if !reflect.DeepEqual(cfg.ElicitationService, want) {
		t.Errorf("elicitation_service = %+v, want %+v", cfg.ElicitationService, want)
	}
	c := cfg.Tools["delete_file"].ConfirmIf
	if c == nil || c.Always || c.Message != "Delete this file?" || len(c.Arguments) != 4 || !c.Active() {
		t.Fatalf("confirm_if = %+v", c)
	}
	if a := c.Arguments[0]; a.Field != "path" || a.Matches.String() != "^/etc/" {
		t.Errorf("matches = %+v", a)
	}
	if a := c.Arguments[1]; *a.Above != 10 || *a.Below != 100 {
		t.Errorf("range = %+v", a)
	}
	if a := c.Arguments[2]; !reflect.DeepEqual(a.Equals, []any{"prod", 3}) {
		t.Errorf("equals = %#v", a.Equals)
	}
	if a := c.Arguments[3]; !a.Present {
		t.Errorf("present = %+v", a)
	}
	a := cfg.Tools["search_docs"].AmbiguousIf
	wantA := &Ambiguity{QueryMinLength: 3, GenericTerms: []string{"docs", "help"}, Field: "query", Candidates: &Candidates{
		Tool: "list_projects", Arguments: map[string]any{"limit": 5}, Pass: map[string]string{"q": "query"},
		Items: "structuredContent.projects", ID: "slug", Label: "name", Value: "slug", Argument: "query", Max: DefaultMaxCandidates,
	}}
	if !reflect.DeepEqual(a, wantA) {
		t.Errorf("ambiguous_if =\n %+v %+v\nwant\n %+v %+v", a, a.Candidates, wantA, wantA.Candidates)
	}
}

func TestParseGateEmbedded(t *testing.T) {
	t.Parallel()
	cfg, err := Parse([]byte("upstream:\n  command: node\nelicitation_service:\n  embedded:\n    listen: 127.0.0.1:8081\n    data_dir: /tmp/x\n"))
	if err != nil {
		t.Fatal(err)
	}
	if e := cfg.ElicitationService.Embedded; e == nil || e.Listen != "127.0.0.1:8081" || e.DataDir != "/tmp/x" || cfg.ElicitationService.WaitSeconds != DefaultWaitSeconds {
		t.Errorf("embedded = %+v", cfg.ElicitationService)
	}
	if cfg.Elicitation.FallbackOnUnsupported != FallbackStructuredError {
		t.Errorf("fallback changed without being set: %q", cfg.Elicitation.FallbackOnUnsupported)
	}
}

func TestParseGateErrors(t *testing.T) {
	t.Parallel()
	const up = "upstream:\n  command: node\n"
	tests := []struct{ name, yaml, want string }{
		{"review page without service", up + "elicitation:\n  fallback_on_unsupported: review_page\n",
			"4: elicitation.fallback_on_unsupported: review_page needs an elicitation_service block (url, or embedded) to create the review pages"},
		{"bad fallback", up + "elicitation:\n  fallback_on_unsupported: page\n",
			`4: elicitation.fallback_on_unsupported: unsupported value "page"; use one of structured_error, review_page`},
		{"service both", up + "elicitation_service:\n  url: http://h/mcp\n  embedded:\n    listen: 127.0.0.1:1\n",
			"4: elicitation_service: set exactly one of url and embedded, not both"},
		{"service neither", up + "elicitation_service:\n  wait_seconds: 5\n",
			"4: elicitation_service: set url (a running elicitation service's MCP endpoint) or embedded (a service inside the proxy)"},
		{"service bad url", up + "elicitation_service:\n  url: localhost:8080\n",
			`4: elicitation_service.url: "localhost:8080" is not an http:// or https:// URL`},
		{"wait too long", up + "elicitation_service:\n  url: http://h/mcp\n  wait_seconds: 900\n",
			"5: elicitation_service.wait_seconds: must be between 1 and 300"},
		{"embedded without listen", up + "elicitation_service:\n  embedded:\n    data_dir: /tmp\n",
			"5: elicitation_service.embedded: listen is required: the address the review pages are served on, such as 127.0.0.1:8081"},
		{"api key env with embedded", up + "elicitation_service:\n  api_key_env: K\n  embedded:\n    listen: 127.0.0.1:1\n",
			"4: elicitation_service.api_key_env: is only valid with url"},
		{"reviewers without sign-in", up + "elicitation_service:\n  reviewers: [bob@example.com]\n  embedded:\n    listen: 127.0.0.1:1\n",
			"4: elicitation_service.reviewers: needs embedded.sign_in: without sign-in a review page cannot tell who opened it, and whoever holds the review URL decides"},
		{"blank reviewer", up + "elicitation_service:\n  url: http://h/mcp\n  reviewers: [\" \"]\n",
			"5: elicitation_service.reviewers[0]: must not be blank"},
		{"sign-in without issuer", up + "elicitation_service:\n  embedded:\n    listen: 127.0.0.1:1\n    sign_in:\n      client_id: web\n",
			"7: elicitation_service.embedded.sign_in: issuer is required: the OpenID Connect issuer reviewers sign in with"},
		{"sign-in without client", up + "elicitation_service:\n  embedded:\n    listen: 127.0.0.1:1\n    sign_in:\n      issuer: https://id.example.com\n",
			"7: elicitation_service.embedded.sign_in: client_id is required: this proxy's client id at the issuer (register <public_url>/review/oidc/callback as its redirect URI)"},
		{"sign-in bad secret env", up + "elicitation_service:\n  embedded:\n    listen: 127.0.0.1:1\n    sign_in:\n      issuer: https://id.example.com\n      client_id: web\n      client_secret_env: 9X\n",
			"9: elicitation_service.embedded.sign_in.client_secret_env: \"9X\" is not a valid environment variable name"},
		{"sign-in unknown key", up + "elicitation_service:\n  embedded:\n    listen: 127.0.0.1:1\n    sign_in:\n      issuer: https://id.example.com\n      client_id: web\n      secret: x\n",
			"9: elicitation_service.embedded.sign_in.secret: unknown key; did you mean \"client_secret_env\"?"},
		{"confirm always string", up + "tools:\n  rm:\n    confirm_if:\n      always: \"yes please\"\n",
			"6: tools.rm.confirm_if.always: must be true or false (or yes/no, on/off), not a string"},
		{"condition without field", up + "tools:\n  rm:\n    confirm_if:\n      arguments:\n        - matches: x\n",
			"7: tools.rm.confirm_if.arguments[0]: field is required: the argument the condition tests"},
		{"condition without test", up + "tools:\n  rm:\n    confirm_if:\n      arguments:\n        - field: x\n",
			"7: tools.rm.confirm_if.arguments[0]: needs one test: above, below, equals, matches, present"},
		{"condition two tests", up + "tools:\n  rm:\n    confirm_if:\n      arguments:\n        - {field: x, matches: a, present: true}\n",
			"7: tools.rm.confirm_if.arguments[0]: has more than one test; list each as its own condition (above and below together make a range)"},
		{"bad regexp", up + "tools:\n  rm:\n    confirm_if:\n      arguments:\n        - {field: x, matches: \"(\"}\n",
			"7: tools.rm.confirm_if.arguments[0].matches: is not a valid regular expression: missing closing ): `(`"},
		{"above not number", up + "tools:\n  rm:\n    confirm_if:\n      arguments:\n        - {field: x, above: ten}\n",
			"7: tools.rm.confirm_if.arguments[0].above: must be a number, not a string"},
		{"empty arguments", up + "tools:\n  rm:\n    confirm_if:\n      arguments: []\n",
			`6: tools.rm.confirm_if.arguments: must be a non-empty list of conditions such as {field: path, matches: "^/etc/"}`},
		{"min length not int", up + "tools:\n  s:\n    ambiguous_if:\n      query_min_length: three\n",
			"6: tools.s.ambiguous_if.query_min_length: must be a whole number, not a string"},
		{"candidates without test", up + "tools:\n  s:\n    ambiguous_if:\n      candidates: {tool: t, items: content, id: uri}\n",
			"6: tools.s.ambiguous_if: candidates needs a test that finds the argument ambiguous: query_min_length or generic_terms"},
		{"candidates without id", up + "tools:\n  s:\n    ambiguous_if:\n      query_min_length: 2\n      candidates: {tool: t, items: content}\n",
			"7: tools.s.ambiguous_if.candidates: id is required"},
		{"candidates bad items", up + "tools:\n  s:\n    ambiguous_if:\n      query_min_length: 2\n      candidates: {tool: t, items: result.x, id: id}\n",
			`7: tools.s.ambiguous_if.candidates.items: "result.x" must start with content or structuredContent (the parts of the tool's result)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.yaml))
			if err == nil {
				t.Fatalf("no error; want %q", tt.want)
			}
			if err.Error() != tt.want {
				t.Errorf("error\n got %q\nwant %q", err.Error(), tt.want)
			}
		})
	}
}

// confirm_if and ambiguous_if are the original's sections: an unknown key
// there warns (the original ignored it), and --strict-config refuses it.
func TestGateOriginalSectionsWarn(t *testing.T) {
	t.Parallel()
	doc := "upstream:\n  command: node\ntools:\n  rm:\n    confirm_if:\n      alway: true\n    ambiguous_if:\n      query_min_length: null\n      generic_terms: [x]\n"
	cfg, err := Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Warnings) != 1 || !strings.Contains(cfg.Warnings[0].Error(), "6: tools.rm.confirm_if.alway: unknown key") {
		t.Errorf("warnings %v", cfg.Warnings)
	}
	if c := cfg.Tools["rm"].ConfirmIf; c.Active() {
		t.Errorf("a misspelt always gates: %+v", c)
	}
	if a := cfg.Tools["rm"].AmbiguousIf; a.QueryMinLength != 0 || !a.Active() {
		t.Errorf("ambiguous_if %+v", a)
	}
	if _, err := ParseWith([]byte(doc), Options{Strict: true}); err == nil || !strings.Contains(err.Error(), "6: tools.rm.confirm_if.alway: unknown key") {
		t.Errorf("strict: %v", err)
	}
}
