package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// The tests in this file port the configuration cases of the Python
// original's tests (test_config.py, test_elicitation_config.py and the
// configuration half of test_readme_examples.py): the same documents, the
// same expected values.

func mustParse(t *testing.T, yaml string) *Config {
	t.Helper()
	cfg, err := Parse([]byte(yaml))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return cfg
}

func TestOriginalMinimalConfig(t *testing.T) {
	t.Parallel()
	cfg := mustParse(t, "upstream:\n  url: \"http://localhost:8001/mcp\"\n")
	if cfg.Upstream.URL != "http://localhost:8001/mcp" || cfg.Upstream.Command != "" ||
		len(cfg.Upstream.Args) != 0 || len(cfg.Upstream.Env) != 0 ||
		cfg.Proxy.Name != "mcp-elicitation-proxy" || !cfg.Elicitation.Enabled ||
		cfg.Elicitation.FallbackOnUnsupported != "structured_error" ||
		!cfg.Policies.SchemaRequired.Enabled || !cfg.Policies.SensitiveRequired.Enabled || len(cfg.Tools) != 0 {
		t.Errorf("defaults: %#v", cfg)
	}
	if len(cfg.Warnings) != 0 {
		t.Errorf("warnings: %v", cfg.Warnings)
	}
}

func TestOriginalCommandConfig(t *testing.T) {
	t.Parallel()
	cfg := mustParse(t, "upstream:\n  command: \"npx\"\n  args:\n    - -y\n    - \"@modelcontextprotocol/server-everything\"\n")
	if cfg.Upstream.URL != "" || cfg.Upstream.Command != "npx" ||
		!reflect.DeepEqual(cfg.Upstream.Args, []string{"-y", "@modelcontextprotocol/server-everything"}) || len(cfg.Upstream.Env) != 0 {
		t.Errorf("upstream: %#v", cfg.Upstream)
	}
	cfg = mustParse(t, "upstream:\n  command: \"uvx\"\n  args:\n    - \"some-mcp-server\"\n  env:\n    SOME_KEY: \"some-value\"\n")
	if cfg.Upstream.Command != "uvx" || !reflect.DeepEqual(cfg.Upstream.Args, []string{"some-mcp-server"}) ||
		!reflect.DeepEqual(cfg.Upstream.Env, map[string]string{"SOME_KEY": "some-value"}) {
		t.Errorf("upstream: %#v", cfg.Upstream)
	}
}

func TestOriginalRefusals(t *testing.T) {
	t.Parallel()
	// The original's refusals, each with the port's located message.
	tests := []struct{ yaml, want string }{
		{"upstream:\n  url: \"http://localhost:8001/mcp\"\n  command: \"npx\"\n", "upstream: set exactly one of url and command"},
		{"upstream: {}\n", "upstream: set exactly one of url (streamable HTTP) and command (stdio)"},
		{"upstream:\n  url: \"http://localhost:8001/mcp\"\n  args:\n    - \"--verbose\"\n", "upstream.args: is only valid with upstream.command"},
		{"upstream:\n  url: ''\n", "upstream.url: must not be blank"},
		{"upstream:\n  url: '   '\n", "upstream.url: must not be blank"},
		{"upstream:\n  command: ''\n", "upstream.command: must not be blank"},
		{"upstream:\n  command: '   '\n", "upstream.command: must not be blank"},
		{"upstream:\n  url: \"http://localhost:8001/mcp\"\nelicitation:\n  fallback_on_unsupported: plain_text\n", `unsupported value "plain_text"`},
	}
	for _, tt := range tests {
		_, err := Parse([]byte(tt.yaml))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Parse(%q) = %v, want an error containing %q", tt.yaml, err, tt.want)
		}
	}
}

func TestOriginalToolRequiredAndPolicyFlags(t *testing.T) {
	t.Parallel()
	cfg := mustParse(t, "upstream:\n  url: \"http://localhost:8001/mcp\"\ntools:\n  search_docs:\n    required:\n      - query\n      - project\n")
	if got := cfg.Tools["search_docs"].Required; !reflect.DeepEqual(got, []string{"query", "project"}) {
		t.Errorf("required: %q", got)
	}
	for _, flags := range [][2]bool{{false, true}, {true, false}} {
		cfg := mustParse(t, strings.NewReplacer("S", boolText(flags[0]), "E", boolText(flags[1])).Replace(
			"upstream:\n  url: \"http://localhost:8001/mcp\"\npolicies:\n  schema_required:\n    enabled: S\n  sensitive_required:\n    enabled: E\n"))
		if cfg.Policies.SchemaRequired.Enabled != flags[0] || cfg.Policies.SensitiveRequired.Enabled != flags[1] {
			t.Errorf("flags %v: %#v", flags, cfg.Policies)
		}
	}
	if mustParse(t, "upstream:\n  url: \"http://localhost:8001/mcp\"\nelicitation:\n  enabled: false\n").Elicitation.Enabled {
		t.Error("elicitation.enabled: false did not disable elicitation")
	}
}

func boolText(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// TestBooleanSpellings checks the spellings the original accepts: YAML
// 1.1's (PyYAML reads yes/no/on/off as booleans) and pydantic's.
func TestBooleanSpellings(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		v    string
		want bool
	}{
		{"yes", true}, {"Yes", true}, {"ON", true}, {"on", true}, {"true", true}, {"True", true}, {`"true"`, true},
		{"y", true}, {"t", true}, {"1", true}, {`"1"`, true},
		{"no", false}, {"No", false}, {"off", false}, {"OFF", false}, {"false", false}, {`"false"`, false},
		{"n", false}, {"f", false}, {"0", false},
	} {
		cfg, err := Parse([]byte("upstream:\n  url: http://h/mcp\nelicitation:\n  enabled: " + tt.v + "\npolicies:\n  schema_required:\n    enabled: " + tt.v + "\n"))
		if err != nil {
			t.Errorf("%s: %v", tt.v, err)
			continue
		}
		if cfg.Elicitation.Enabled != tt.want || cfg.Policies.SchemaRequired.Enabled != tt.want {
			t.Errorf("%s read as %v, want %v", tt.v, cfg.Elicitation.Enabled, tt.want)
		}
	}
	for _, v := range []string{"maybe", "2", "[]", `""`} {
		if _, err := Parse([]byte("upstream:\n  url: http://h/mcp\nelicitation:\n  enabled: " + v + "\n")); err == nil ||
			!strings.Contains(err.Error(), "4: elicitation.enabled: must be true or false") {
			t.Errorf("%s: error %v", v, err)
		}
	}
}

func TestOriginalMarkerKeys(t *testing.T) {
	t.Parallel()
	cfg := mustParse(t, `upstream:
  url: http://h/mcp
policies:
  sensitive_required:
    enabled: true
    sensitive_name_markers:
      - message
    sensitive_schema_markers: ["", "pass phrase"]
`)
	s := cfg.Policies.SensitiveRequired
	if !reflect.DeepEqual(s.SensitiveNameMarkers, []string{"message"}) || !reflect.DeepEqual(s.SensitiveSchemaMarkers, []string{"pass phrase"}) {
		t.Errorf("markers: %#v", s)
	}
	cfg = mustParse(t, "upstream:\n  url: http://h/mcp\npolicies:\n  sensitive_required:\n    sensitive_name_markers:\n    sensitive_schema_markers: []\n")
	if s := cfg.Policies.SensitiveRequired; s.SensitiveNameMarkers != nil || len(s.SensitiveSchemaMarkers) != 0 {
		t.Errorf("null and empty marker lists: %#v", s)
	}
}

// TestOriginalLenientValues checks values the original accepts that a
// stricter reading would refuse: null optional sections, blank messages,
// field types a form cannot ask for, duplicate required fields.
func TestOriginalLenientValues(t *testing.T) {
	t.Parallel()
	cfg := mustParse(t, `upstream:
  url: http://h/mcp
tools:
  a:
    elicit:
  b:
    ambiguous_if:
    confirm_if:
    elicit:
      message: ""
      fields:
        x:
          type: array
          description:
  c:
    required: [q, q]
`)
	if a := cfg.Tools["a"]; a.Elicit.Message != "" || a.AmbiguousIf != nil {
		t.Errorf("tool a: %#v", a)
	}
	if b := cfg.Tools["b"]; b.Elicit.Message != "" || b.Elicit.Fields["x"] != (Field{}) || b.ConfirmIf != nil {
		t.Errorf("tool b: %#v", b)
	}
	if c := cfg.Tools["c"]; !reflect.DeepEqual(c.Required, []string{"q"}) {
		t.Errorf("tool c: %#v", c)
	}
	var got []string
	for _, w := range cfg.Warnings {
		got = append(got, w.Error())
	}
	want := []string{
		`13: tools.b.elicit.fields.x.type: type "array" is not one a form can ask for (string, number, integer, boolean); the upstream's type is used`,
		`16: tools.c.required[1]: "q" is listed twice; it counts once`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("warnings:\n got %q\nwant %q", got, want)
	}
}

// TestUnknownKeys checks that an unknown key loads with a warning that
// names its place and the nearest known key, and that strict mode refuses
// it with the same text.
func TestUnknownKeys(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, yaml, want string }{
		{"top", "upstream:\n  command: node\nextra: 1\n", "3: extra: unknown key%s; known keys here: elicitation, elicitation_service, policies, proxy, tools, upstream"},
		{"typo top", "upstream:\n  command: node\npolicy:\n  x: 1\n", `3: policy: unknown key%s; did you mean "policies"?`},
		{"nested", "upstream:\n  command: node\n  cmd: x\n", `3: upstream.cmd: unknown key%s; did you mean "command"?`},
		{"tool typo", "upstream:\n  command: node\ntools:\n  echo:\n    requird: [a]\n", `5: tools.echo.requird: unknown key%s; did you mean "required"?`},
		{"marker typo", "upstream:\n  command: node\npolicies:\n  sensitive_required:\n    sensitive_name_marker: [a]\n", `5: policies.sensitive_required.sensitive_name_marker: unknown key%s; did you mean "sensitive_name_markers"?`},
		{"case", "upstream:\n  command: node\n  URL: x\n", `3: upstream.URL: unknown key%s; did you mean "url"?`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Parse([]byte(tt.yaml))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			want := strings.Replace(tt.want, "%s", ", ignored", 1)
			if len(cfg.Warnings) != 1 || cfg.Warnings[0].Error() != want {
				t.Errorf("warnings %q, want [%q]", cfg.Warnings, want)
			}
			_, err = ParseWith([]byte(tt.yaml), Options{Strict: true})
			want = strings.Replace(tt.want, "%s", "", 1)
			if err == nil || err.Error() != want {
				t.Errorf("strict: error %v, want %q", err, want)
			}
		})
	}
	t.Run("file and line", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "config.yaml")
		os.WriteFile(path, []byte("upstream:\n  command: node\ntools:\n  echo:\n    requird: [a]\n"), 0o600)
		cfg, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(cfg.Warnings) != 1 || !strings.HasPrefix(cfg.Warnings[0].Error(), path+`:5: tools.echo.requird: unknown key, ignored; did you mean "required"?`) {
			t.Errorf("warnings %q", cfg.Warnings)
		}
		if _, err := LoadWith(path, Options{Strict: true}); err == nil || !strings.HasPrefix(err.Error(), path+":5: ") {
			t.Errorf("strict: %v", err)
		}
	})
}

// TestOriginalFiles loads the original's README configurations and its
// manual-test configuration unchanged, with the values its tests expect.
func TestOriginalFiles(t *testing.T) {
	t.Parallel()
	load := func(name string) *Config {
		t.Helper()
		cfg, err := LoadWith(filepath.Join("testdata", "original", name), Options{Strict: true})
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	cfg := load("readme-http-upstream.config.yaml")
	sd := cfg.Tools["search_docs"]
	if cfg.Upstream.URL != "http://localhost:8001/mcp" || cfg.Proxy.Name != "mcp-elicitation-proxy" ||
		!cfg.Elicitation.Enabled || cfg.Elicitation.FallbackOnUnsupported != "structured_error" ||
		!reflect.DeepEqual(sd.Required, []string{"query", "project"}) ||
		sd.Elicit.Message != "Provide the missing search details." ||
		sd.Elicit.Fields["project"].Description != "Project or scope to search." {
		t.Errorf("README HTTP example: %#v", cfg)
	}
	cfg = load("readme-command-upstream.config.yaml")
	if cfg.Upstream.URL != "" || cfg.Upstream.Command != "npx" ||
		!reflect.DeepEqual(cfg.Upstream.Args, []string{"-y", "@modelcontextprotocol/server-everything"}) || cfg.Proxy.Name != "mcp-elicitation-proxy" {
		t.Errorf("README command example: %#v", cfg)
	}
	cfg = load("manual-everything.config.yaml")
	echo := cfg.Tools["echo"]
	if cfg.Proxy.Name != "mcp-elicitation-proxy-manual-everything" ||
		!reflect.DeepEqual(cfg.Upstream.Env, map[string]string{"MCP_ELICITATION_PROXY_MANUAL_TEST": "env-ok"}) ||
		echo.Elicit.Message != "To complete the proxy test, provide the message to send to the echo tool." ||
		echo.Elicit.Fields["message"] != (Field{Type: "string", Description: "Text that the echo tool should repeat in its response."}) {
		t.Errorf("manual-everything: %#v", cfg)
	}
}

func TestSSEURL(t *testing.T) {
	t.Parallel()
	for u, want := range map[string]bool{
		"http://h/sse": true, "http://h/sse/": true, "https://h/a/sse?k=v": true,
		"http://h/mcp": false, "http://h/sse/mcp": false, "http://h/ssex": false,
	} {
		if got := (Upstream{URL: u}).SSE(); got != want {
			t.Errorf("SSE(%s) = %v", u, got)
		}
	}
}

// TestOriginalScriptURL: the original's tests point upstream.url at a
// server script, which FastMCP runs on stdio; the port runs it with
// python3 or node.
func TestOriginalScriptURL(t *testing.T) {
	t.Parallel()
	for url, want := range map[string]Upstream{
		"/tmp/upstream_server.py": {Command: "python3", Args: []string{"/tmp/upstream_server.py"}},
		"server.js":               {Command: "node", Args: []string{"server.js"}},
	} {
		cfg := mustParse(t, "upstream:\n  url: "+url+"\n")
		if !reflect.DeepEqual(cfg.Upstream, want) {
			t.Errorf("url %s: %#v", url, cfg.Upstream)
		}
	}
	for _, y := range []string{
		"upstream:\n  url: server.py\n  command: node\n",
		"upstream:\n  url: server.py\n  args: [x]\n",
		"upstream:\n  url: ftp://h/server.py\n",
	} {
		if _, err := Parse([]byte(y)); err == nil {
			t.Errorf("%q loaded", y)
		}
	}
}
