package proxy_test

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/proxy"
	"github.com/mcp-elicitation/elicitation/internal/proxy/plan"
)

// upstreamKind is how the proxy reaches the reference server in a test.
type upstreamKind struct {
	name string
	// yaml is the upstream section; env marks a command upstream whose
	// environment the test checks.
	yaml string
	env  bool
}

func everythingUpstreams(t *testing.T) []upstreamKind {
	node, script := everything(t)
	return []upstreamKind{
		{"stdio", fmt.Sprintf("upstream:\n  command: %q\n  args: [%q]\n  env:\n    PROXY_TEST_ENV: \"reached-the-upstream\"\n", node, script), true},
		{"http", fmt.Sprintf("upstream:\n  url: %q\n", startEverythingHTTP(t)), false},
		{"sse", fmt.Sprintf("upstream:\n  url: %q\n", startEverythingSSE(t)), false},
	}
}

const everythingTools = `
tools:
  echo:
    elicit:
      message: "What should the reference server echo?"
      fields:
        message:
          description: "Text to echo back."
`

// TestEverythingDiscovery checks that tools/list through the proxy is the
// reference server's own, byte for byte, with no wrapper and no prefix.
func TestEverythingDiscovery(t *testing.T) {
	node, script := everything(t)
	for _, up := range everythingUpstreams(t) {
		t.Run(up.name, func(t *testing.T) {
			var direct []byte
			switch {
			case up.env:
				direct = rawToolsFromCommand(t, repoRoot(t), node, script)
			case up.name == "sse":
				direct = rawToolsFromCommand(t, repoRoot(t), node, script) // the same server, on stdio
			default:
				url := strings.TrimSuffix(strings.SplitN(up.yaml, "\"", 3)[1], "\"")
				direct = rawToolsFromHTTP(t, url)
			}
			p := startProxy(t, up.yaml+everythingTools)
			via := rawToolsFromProxy(t, p)

			want, wantNames := toolsByName(t, direct)
			got, gotNames := toolsByName(t, via)
			if strings.Join(gotNames, ",") != strings.Join(wantNames, ",") {
				t.Fatalf("tool names through the proxy\n got %q\nwant %q", gotNames, wantNames)
			}
			for _, name := range wantNames {
				if !bytes.Equal(got[name], want[name]) {
					t.Errorf("tool %s changed by the proxy:\n got %s\nwant %s", name, got[name], want[name])
				}
				if name == "call_upstream_tool" || strings.HasPrefix(name, "upstream_") {
					t.Errorf("wrapper or prefixed tool %q listed", name)
				}
			}
			echo, ok := got["echo"]
			if !ok {
				t.Fatal("echo not listed")
			}
			for _, part := range []string{`"execution":{"taskSupport":"forbidden"}`, `"$schema":"http://json-schema.org/draft-07/schema#"`, `"required":["message"]`} {
				if !bytes.Contains(echo, []byte(part)) {
					t.Errorf("echo lacks %s: %s", part, echo)
				}
			}
			if t.Failed() {
				return
			}
			// The same listing reaches an HTTP client of the proxy.
			cs := connect(t, p, downstreams[2], nil, nil)
			res, err := cs.ListTools(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Tools) != len(wantNames) {
				t.Errorf("HTTP client sees %d tools, want %d", len(res.Tools), len(wantNames))
			}
		})
	}
}

// TestEverythingCalls drives echo through the proxy against the reference
// server for every kind of upstream and downstream.
func TestEverythingCalls(t *testing.T) {
	for _, up := range everythingUpstreams(t) {
		t.Run(up.name, func(t *testing.T) {
			p := startProxy(t, up.yaml+everythingTools)
			disabled := startProxy(t, up.yaml+everythingTools+"elicitation:\n  enabled: false\n")
			secret := startProxy(t, up.yaml+everythingTools+"policies:\n  sensitive_required:\n    name_markers: [message]\n")
			for _, d := range downstreams {
				t.Run(d.name, func(t *testing.T) {
					t.Run("complete call forwarded", func(t *testing.T) {
						cs := connect(t, p, d, &elicitor{answer: action("decline")}, nil)
						res := callTool(t, cs, "echo", map[string]any{"message": "hello"})
						if res.IsError || text(res) != "Echo: hello" {
							t.Errorf("echo: %s", text(res))
						}
					})
					t.Run("missing message elicited", func(t *testing.T) {
						e := &elicitor{answer: accept(map[string]any{"message": "from the form"})}
						cs := connect(t, p, d, e, nil)
						res := callTool(t, cs, "echo", map[string]any{})
						if res.IsError || text(res) != "Echo: from the form" {
							t.Errorf("echo: %s", text(res))
						}
						if e.count() != 1 || e.last().Message != "What should the reference server echo?" {
							t.Errorf("forms %d, last %+v", e.count(), e.last())
						}
					})
					for _, tt := range []struct {
						name   string
						p      *proxy.Proxy
						e      *elicitor
						reason string
						forms  int
					}{
						{"declined", p, &elicitor{answer: action("decline")}, plan.ReasonDeclined, 1},
						{"cancelled", p, &elicitor{answer: action("cancel")}, plan.ReasonCancelled, 1},
						{"unsupported", p, nil, plan.ReasonUnsupported, 0},
						{"disabled", disabled, &elicitor{answer: accept(map[string]any{"message": "x"})}, plan.ReasonDisabled, 0},
						{"sensitive marker blocks", secret, &elicitor{answer: accept(map[string]any{"message": "x"})}, plan.ReasonSensitive, 0},
					} {
						t.Run(tt.name, func(t *testing.T) {
							cs := connect(t, tt.p, d, tt.e, nil)
							o := outcome(t, callTool(t, cs, "echo", map[string]any{}))
							if o.Reason != tt.reason || o.Tool != "echo" || len(o.MissingOrAmbiguous) != 1 || o.MissingOrAmbiguous[0] != "message" {
								t.Errorf("outcome %+v, want reason %s", o, tt.reason)
							}
							if tt.e != nil && tt.e.count() != tt.forms {
								t.Errorf("%d forms shown, want %d", tt.e.count(), tt.forms)
							}
						})
					}
					if up.env {
						t.Run("upstream env", func(t *testing.T) {
							cs := connect(t, p, d, nil, nil)
							res := callTool(t, cs, "get-env", map[string]any{})
							if !strings.Contains(text(res), `"PROXY_TEST_ENV": "reached-the-upstream"`) {
								t.Errorf("get-env does not show the configured variable: %.300s", text(res))
							}
						})
					}
				})
			}
		})
	}
}

var _ = mcp.Implementation{}

// TestEverythingEnvironment checks what a stdio upstream's environment
// holds: the safe default variables plus upstream.env, not the proxy's
// other variables, unless upstream.inherit_env asks for all of them.
func TestEverythingEnvironment(t *testing.T) {
	t.Setenv("PROXY_TEST_SECRET", "must-not-reach-the-upstream")
	node, script := everything(t)
	base := fmt.Sprintf("upstream:\n  command: %q\n  args: [%q]\n  env:\n    PROXY_TEST_ENV: \"reached-the-upstream\"\n", node, script)
	for _, tt := range []struct {
		name    string
		yaml    string
		inherit bool
	}{
		{"default", base, false},
		{"inherit_env", base + "  inherit_env: yes\n", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := startProxy(t, tt.yaml)
			env := text(callTool(t, connect(t, p, downstreams[0], nil, nil), "get-env", map[string]any{}))
			if !strings.Contains(env, `"PROXY_TEST_ENV": "reached-the-upstream"`) || !strings.Contains(env, `"PATH":`) {
				t.Errorf("get-env lacks the configured variable or PATH: %.400s", env)
			}
			if got := strings.Contains(env, "must-not-reach-the-upstream"); got != tt.inherit {
				t.Errorf("the proxy's own variable reached the upstream: %v, want %v", got, tt.inherit)
			}
		})
	}
}

// TestEverythingScriptURL: an upstream.url naming a server script, as the
// original's configurations may (FastMCP runs it on stdio), runs it.
func TestEverythingScriptURL(t *testing.T) {
	_, script := everything(t)
	js, err := filepath.EvalSymlinks(script)
	if err != nil || !strings.HasSuffix(js, ".js") {
		t.Fatalf("the reference server's script: %q %v", js, err)
	}
	p := startProxy(t, fmt.Sprintf("upstream:\n  url: %q\n", js))
	if res := callTool(t, connect(t, p, downstreams[0], nil, nil), "echo", map[string]any{"message": "from a script url"}); text(res) != "Echo: from a script url" {
		t.Errorf("echo: %s", text(res))
	}
	if p.UpstreamPID() == 0 {
		t.Error("no stdio child for a script url")
	}
}
