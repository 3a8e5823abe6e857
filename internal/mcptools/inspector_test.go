package mcptools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/mcptools"
	"github.com/mcp-elicitation/elicitation/internal/testenv"
)

// inspector runs the real MCP Inspector CLI (@modelcontextprotocol/inspector
// 2.x, a client no one here wrote) against url, on Node 22 (its engines ask
// for 22.19 or later) with a scratch HOME (it keeps a catalog and a client
// configuration under ~/.mcp-inspector). It returns what the CLI printed
// on stdout and fails the test unless it exited with wantExit: 0, or 5 for
// a tool result with isError (the CLI's exit code for a tool error).
func inspector(t *testing.T, url string, wantExit int, args ...string) string {
	t.Helper()
	root, node := testenv.Root(t), testenv.Node22(t)
	bin := testenv.NodeModule(t, ".bin/mcp-inspector")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{bin, "--cli", url, "--transport", "http"}, args...)...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.Output()
	code := 0
	var stderr string
	if ee, ok := err.(*exec.ExitError); ok {
		code, stderr = ee.ExitCode(), string(ee.Stderr)
	} else if err != nil {
		t.Fatalf("mcp-inspector %v: %v", args, err)
	}
	if code != wantExit {
		t.Fatalf("mcp-inspector %v: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", args, code, wantExit, out, stderr)
	}
	return string(out)
}

// TestInspectorCLI: the Inspector lists the six tools, a tools/call of
// elicit_status on an unknown id returns the not_found tool error, and a
// request created and awaited with it gets the plain results (it declares
// no URL elicitation, so push changes nothing), through the default and
// the stateless handler with push on.
func TestInspectorCLI(t *testing.T) {
	t.Parallel()
	for _, stateless := range []bool{false, true} {
		name := "stateful"
		if stateless {
			name = "stateless"
		}
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, envOptions{stateless: stateless, push: true})
			url := e.servers[0].URL + "/mcp"

			var list struct {
				Tools []struct {
					Name         string          `json:"name"`
					InputSchema  json.RawMessage `json:"inputSchema"`
					OutputSchema json.RawMessage `json:"outputSchema"`
				} `json:"tools"`
			}
			out := inspector(t, url, 0, "--method", "tools/list")
			if err := json.Unmarshal([]byte(out), &list); err != nil {
				t.Fatalf("tools/list output is not JSON: %v\n%s", err, out)
			}
			var names []string
			for _, tool := range list.Tools {
				names = append(names, tool.Name)
				if len(tool.OutputSchema) == 0 {
					t.Errorf("%s: no outputSchema in the Inspector's view", tool.Name)
				}
			}
			slices.Sort(names)
			if want := slices.Sorted(slices.Values(mcptools.ToolNames)); !slices.Equal(names, want) {
				t.Errorf("Inspector lists %v, want %v", names, want)
			}

			var res struct {
				IsError bool `json:"isError"`
				Content []struct {
					Type, Text string
				} `json:"content"`
			}
			out = inspector(t, url, 5, "--method", "tools/call", "--tool-name", "elicit_status", "--tool-arg", "elicitationId=nope")
			if err := json.Unmarshal([]byte(out), &res); err != nil {
				t.Fatalf("tools/call output is not JSON: %v\n%s", err, out)
			}
			if !res.IsError || len(res.Content) != 1 || res.Content[0].Text != "not_found: no elicitation with that id" {
				t.Errorf("elicit_status on an unknown id via the Inspector = %s", strings.TrimSpace(out))
			}

			var created struct {
				IsError           bool           `json:"isError"`
				StructuredContent map[string]any `json:"structuredContent"`
				InputRequests     any            `json:"inputRequests"`
			}
			out = inspector(t, url, 0, "--method", "tools/call", "--tool-name", "elicit_approval", "--tool-arg", "message=Ship it?", "--tool-arg", `context={"v":1}`)
			if err := json.Unmarshal([]byte(out), &created); err != nil || created.IsError || created.StructuredContent["status"] != "pending" {
				t.Fatalf("elicit_approval via the Inspector = %s (%v)", out, err)
			}
			id, _ := created.StructuredContent["elicitationId"].(string)
			var awaited struct {
				StructuredContent map[string]any `json:"structuredContent"`
				InputRequests     any            `json:"inputRequests"`
			}
			out = inspector(t, url, 0, "--method", "tools/call", "--tool-name", "elicit_await", "--tool-arg", "elicitationId="+id, "--tool-arg", "waitSeconds=0.2")
			if err := json.Unmarshal([]byte(out), &awaited); err != nil || awaited.InputRequests != nil || fmt.Sprint(awaited.StructuredContent) != "map[status:pending]" {
				t.Errorf("elicit_await via the Inspector = %s, want the plain pending result", out)
			}
		})
	}
}

// TestInspectorCLIHeader: on an endpoint with API keys the Inspector CLI
// (2.x) sends the key with --header, as docs/hosts.md says (put last: it
// takes every word up to the next option), and without it fails with the
// CLI's auth_required (exit 3) instead of listing anything.
func TestInspectorCLIHeader(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{auth: map[string]string{"tok-alice": "alice"}})
	url := e.servers[0].URL + "/mcp"
	out := inspector(t, url, 0, "--method", "tools/list", "--header", "Authorization: Bearer tok-alice")
	if !strings.Contains(out, `"name": "elicit_approval"`) {
		t.Errorf("tools/list with the key: %s", out)
	}
	if out := inspector(t, url, 3, "--method", "tools/list", "--stored-auth-only"); strings.Contains(out, "elicit_approval") {
		t.Errorf("tools/list without the key listed the tools: %s", out)
	}
}
