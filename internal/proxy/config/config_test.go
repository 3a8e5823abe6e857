package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mcp-elicitation/elicitation/internal/testenv"
)

const full = `proxy:
  name: "elicitation-proxy"
upstream:
  command: "node"
  args:
    - node_modules/.bin/mcp-server-everything
    - 3001
  env:
    PROXY_MANUAL_TEST: "visible"
elicitation:
  enabled: true
  fallback_on_unsupported: "structured_error"
policies:
  schema_required:
    enabled: true
  sensitive_required:
    enabled: true
    default_markers: false
    name_markers: [message]
    schema_markers: ["pass phrase"]
tools:
  echo:
    required: [message, project]
    elicit:
      message: "Provide the message to echo."
      fields:
        message:
          type: string
          description: "Text to echo back."
    ambiguous_if:
      field: message
      generic_terms: ["it", "that"]
    confirm_if:
      always: true
`

func TestParseFull(t *testing.T) {
	t.Parallel()
	cfg, err := Parse([]byte(full))
	if err != nil {
		t.Fatal(err)
	}
	want := &Config{
		Proxy: Proxy{Name: "elicitation-proxy"},
		Upstream: Upstream{
			Command: "node",
			Args:    []string{"node_modules/.bin/mcp-server-everything", "3001"},
			Env:     map[string]string{"PROXY_MANUAL_TEST": "visible"},
		},
		Elicitation: Elicitation{Enabled: true, FallbackOnUnsupported: "structured_error"},
		Policies: Policies{
			SchemaRequired: SchemaRequired{Enabled: true},
			SensitiveRequired: SensitiveRequired{
				Enabled:        true,
				DefaultMarkers: false,
				NameMarkers:    []string{"message"},
				SchemaMarkers:  []string{"pass phrase"},
			},
		},
		Tools: map[string]Tool{"echo": {
			Required: []string{"message", "project"},
			Elicit: Elicit{
				Message: "Provide the message to echo.",
				Fields:  map[string]Field{"message": {Type: "string", Description: "Text to echo back."}},
			},
			AmbiguousIf: &Ambiguity{Field: "message", GenericTerms: []string{"it", "that"}},
			ConfirmIf:   &Confirm{Always: true},
		}},
	}
	if !reflect.DeepEqual(cfg, want) {
		t.Errorf("Parse:\n got %#v\nwant %#v", cfg, want)
	}
}

func TestParseDefaults(t *testing.T) {
	t.Parallel()
	cfg, err := Parse([]byte("upstream:\n  url: http://localhost:8001/mcp\n"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Proxy.Name != DefaultName || !cfg.Elicitation.Enabled ||
		cfg.Elicitation.FallbackOnUnsupported != FallbackStructuredError ||
		!cfg.Policies.SchemaRequired.Enabled || !cfg.Policies.SensitiveRequired.Enabled ||
		!cfg.Policies.SensitiveRequired.DefaultMarkers || len(cfg.Upstream.Args) != 0 {
		t.Errorf("defaults not applied: %#v", cfg)
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		yaml string
		want string // the whole error text
	}{
		{"empty", "", "the configuration is empty: an upstream is required"},
		{"not a mapping", "- a\n", "1: the configuration must be a mapping, not a list"},
		{"no upstream", "proxy:\n  name: x\n", "1: upstream is required: set upstream.url (streamable HTTP) or upstream.command (stdio)"},
		{"both upstreams", "upstream:\n  url: http://h/mcp\n  command: node\n", "2: upstream: set exactly one of url and command, not both"},
		{"neither upstream", "upstream: {}\n", "1: upstream: set exactly one of url (streamable HTTP) and command (stdio)"},
		{"args without command", "upstream:\n  url: http://h/mcp\n  args: [a]\n", "3: upstream.args: is only valid with upstream.command"},
		{"env without command", "upstream:\n  url: http://h/mcp\n  env:\n    A: b\n", "4: upstream.env: is only valid with upstream.command"},
		{"blank command", "upstream:\n  command: \"  \"\n", "2: upstream.command: must not be blank"},
		{"null name", "proxy:\n  name:\nupstream:\n  command: node\n", "2: proxy.name: must be a string, not empty"},
		{"number name", "proxy:\n  name: 12\nupstream:\n  command: node\n", "2: proxy.name: must be a string, not a number"},
		{"bad url", "upstream:\n  url: localhost:8001\n", `2: upstream.url: "localhost:8001" is not an http:// or https:// URL (or a .py or .js server script)`},
		{"args not list", "upstream:\n  command: node\n  args: a b\n", "3: upstream.args: must be a list, not a string"},
		{"arg a mapping", "upstream:\n  command: node\n  args:\n    - {a: 1}\n", "4: upstream.args[0]: must be a string, not a mapping"},
		{"env number", "upstream:\n  command: node\n  env:\n    PORT: 3001\n", "4: upstream.env.PORT: must be a string (quote numbers and booleans)"},
		{"env bad name", "upstream:\n  command: node\n  env:\n    \"A-B\": x\n", `4: upstream.env.A-B: "A-B" is not a valid environment variable name`},
		{"fallback", "upstream:\n  command: node\nelicitation:\n  fallback_on_unsupported: forward\n", `4: elicitation.fallback_on_unsupported: unsupported value "forward"; use one of structured_error, review_page`},
		{"required blank", "upstream:\n  command: node\ntools:\n  t:\n    required: [\"\"]\n", "5: tools.t.required[0]: must not be blank"},
		{"duplicate key of the port's own sections", "upstream:\n  command: node\ntools:\n  t:\n    confirm_if:\n      always: true\n      arguments:\n        - {field: a, present: true, field: b}\n", "8: tools.t.confirm_if.arguments[0].field: duplicate key"},
		{"tools not mapping", "upstream:\n  command: node\ntools: [a]\n", "3: tools: must be a mapping, not a list"},
		{"two documents", "upstream:\n  command: node\n---\nproxy: {}\n", "3: more than one YAML document; put the whole configuration in one"},
		{"bad yaml", "upstream:\n  command: [\n", "2: invalid YAML: did not find expected node content"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.yaml))
			if err == nil {
				t.Fatalf("Parse succeeded, want error %q", tt.want)
			}
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("error %v is %T, want *Error", err, err)
			}
			if err.Error() != tt.want {
				t.Errorf("error:\n got %q\nwant %q", err.Error(), tt.want)
			}
		})
	}
}

func TestLoadNamesFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte("upstream:\n  url: ftp://x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Load(path)
	if err == nil || !strings.HasPrefix(err.Error(), path+":2: upstream.url:") {
		t.Errorf("Load error = %v, want it to start with %q", err, path+":2: upstream.url:")
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing.yaml")); err == nil || !strings.Contains(err.Error(), "reading config") {
		t.Errorf("Load of a missing file: %v", err)
	}
}

// FuzzParse checks that no input crashes the loader, that every refusal is
// one located *Error, and that an accepted configuration has exactly one
// upstream.
func FuzzParse(f *testing.F) {
	f.Add([]byte(full))
	f.Add([]byte("upstream:\n  url: http://localhost:8001/mcp\n"))
	f.Add([]byte("upstream:\n  command: npx\n  args: [-y, x]\n  env: {A: b}\n"))
	f.Add([]byte("upstream: {url: http://h/mcp, command: x}\n"))
	f.Add([]byte("tools: {t: {required: [a], elicit: {fields: {a: {type: integer}}}}}\n"))
	f.Add([]byte("a: &x [*x]\n"))
	f.Add([]byte("upstream:\n  command: !!binary aGVsbG8=\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := Parse(data)
		if err != nil {
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("error %v is %T, want *Error", err, err)
			}
			if ce.Msg == "" {
				t.Fatalf("error without a message: %#v", ce)
			}
			return
		}
		if (cfg.Upstream.URL == "") == (cfg.Upstream.Command == "") {
			t.Fatalf("accepted config without exactly one upstream: %#v", cfg.Upstream)
		}
		if cfg.Upstream.URL != "" && (len(cfg.Upstream.Args) != 0 || cfg.Upstream.Env != nil) {
			t.Fatalf("accepted args/env with a URL upstream: %#v", cfg.Upstream)
		}
	})
}

// TestExamples checks that every example configuration in examples/ loads.
func TestExamples(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob(filepath.Join(testenv.Root(t), "examples", "*.config.yaml"))
	if len(files) < 3 {
		t.Fatalf("want the HTTP, command and manual example configurations in examples/, found %q", files)
	}
	for _, f := range files {
		if _, err := Load(f); err != nil {
			t.Error(err)
		}
	}
}
