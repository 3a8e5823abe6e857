package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/mcptools/pushtest"
	"github.com/mcp-elicitation/elicitation/internal/testenv"
)

// TestTypeScriptHost: a host on the TypeScript SDK (1.32.2, protocol
// 2025-11-25) against the local default server. Declaring URL elicitation,
// it is pushed the review URL after the creation result and told when the
// request is decided; not declaring it, it sees only the plain results,
// which are the same in both cases.
func TestTypeScriptHost(t *testing.T) {
	m := start(t, "--data-dir", t.TempDir(), "--max-wait", "10s")
	node := testenv.Node(t)
	testenv.NodeModule(t, "@modelcontextprotocol/sdk/package.json")
	script := filepath.Join(testenv.Root(t), "cmd", "elicitation", "testdata", "tsclient.mjs")
	for _, mode := range []string{"url", "plain"} {
		t.Run(mode, func(t *testing.T) {
			cmd := exec.Command(node, script, m.MCPURL, mode)
			stdin, _ := cmd.StdinPipe()
			stdout, _ := cmd.StdoutPipe()
			stderr := &testenv.SyncBuffer{}
			cmd.Stderr = stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				_ = cmd.Process.Kill()
				_ = cmd.Wait()
				if t.Failed() {
					t.Logf("node stderr:\n%s", stderr.String())
				}
			})
			events := make(chan map[string]any, 16)
			go func() {
				sc := bufio.NewScanner(stdout)
				sc.Buffer(make([]byte, 1<<20), 1<<20)
				for sc.Scan() {
					var ev map[string]any
					if json.Unmarshal(sc.Bytes(), &ev) == nil {
						events <- ev
					}
				}
				close(events)
			}()
			seen := map[string]map[string]any{}
			waitFor := func(name string) map[string]any {
				t.Helper()
				deadline := time.After(30 * time.Second)
				for seen[name] == nil {
					select {
					case ev, ok := <-events:
						if !ok {
							t.Fatalf("the TypeScript host exited before %q", name)
						}
						seen[ev["event"].(string)] = ev
					case <-deadline:
						t.Fatalf("no %q from the TypeScript host", name)
					}
				}
				return seen[name]
			}
			if v := waitFor("connected")["protocolVersion"]; v != "2025-11-25" {
				t.Fatalf("negotiated %v", v)
			}
			created := waitFor("created")["result"].(map[string]any)["structuredContent"].(map[string]any)
			id, reviewURL := created["elicitationId"].(string), created["reviewUrl"].(string)
			if mode == "url" {
				p := waitFor("elicit")["params"].(map[string]any)
				if p["mode"] != "url" || p["url"] != reviewURL || p["elicitationId"] != id || p["message"] != "Ship build 7?" {
					t.Fatalf("pushed %v", p)
				}
			}
			pushtest.Decide(t, reviewURL, "submitted")
			_, _ = io.WriteString(stdin, "decided\n")
			awaited := waitFor("awaited")["result"].(map[string]any)["structuredContent"]
			result := waitFor("result")["result"].(map[string]any)["structuredContent"].(map[string]any)
			if fmt.Sprint(awaited) != "map[status:submitted]" || result["decision"] != "submitted" {
				t.Fatalf("awaited %v, result %v", awaited, result)
			}
			if mode == "url" {
				if got := waitFor("complete")["params"].(map[string]any)["elicitationId"]; got != id {
					t.Fatalf("complete notice for %v, want %s", got, id)
				}
			}
			_, _ = io.WriteString(stdin, "done\n")
			if err := cmd.Wait(); err != nil {
				t.Fatalf("the TypeScript host: %v", err)
			}
			if _, ok := seen["elicit"]; ok != (mode == "url") {
				t.Errorf("pushed: %v, want %v", ok, mode == "url")
			}
		})
	}
}
