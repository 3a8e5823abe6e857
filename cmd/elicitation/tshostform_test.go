package main

import (
	"bufio"
	"encoding/json"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/mcptools/pushtest"
	"github.com/mcp-elicitation/elicitation/internal/testenv"
)

// TestTypeScriptHostForm: a host on the TypeScript SDK (1.32.2, protocol
// 2025-11-25) that declares form elicitation, against the local server with
// --host-form: askInHost's elicit_await shows it the form, and its accept,
// decline and cancel land as the review page's would (cancel decides
// nothing: the page then does), each recorded with where it was decided.
func TestTypeScriptHostForm(t *testing.T) {
	testenv.Slow(t, "TypeScript SDK")
	m := start(t, "--data-dir", t.TempDir(), "--max-wait", "10s", "--host-form")
	node := testenv.Node(t)
	testenv.NodeModule(t, "@modelcontextprotocol/sdk/package.json")
	script := filepath.Join(testenv.Root(t), "cmd", "elicitation", "testdata", "tshostform.mjs")
	for _, tc := range []struct{ answer, awaited, decision, via string }{
		{"accept", "submitted", "submitted", "host-form"},
		{"decline", "declined", "declined", "host-form"},
		{"cancel", "pending", "submitted", "page"},
	} {
		t.Run(tc.answer, func(t *testing.T) {
			cmd := exec.Command(node, script, m.MCPURL, tc.answer)
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
			if hf, _ := created["hostForm"].(string); !strings.HasPrefix(hf, "asked in the host") {
				t.Fatalf("hostForm = %q", hf)
			}
			p := waitFor("elicit")["params"].(map[string]any)
			if p["mode"] != "form" || !strings.HasPrefix(p["message"].(string), "Ship build 8?") || !strings.Contains(p["message"].(string), `"build": 8`) {
				t.Fatalf("form shown: %v", p)
			}
			awaited := waitFor("awaited")["result"].(map[string]any)["structuredContent"].(map[string]any)
			if awaited["status"] != tc.awaited {
				t.Fatalf("awaited %v, want %s", awaited, tc.awaited)
			}
			if tc.answer == "cancel" {
				pushtest.Decide(t, created["reviewUrl"].(string), "submitted")
				_, _ = io.WriteString(stdin, "decided\n")
			}
			result := waitFor("result")["result"].(map[string]any)["structuredContent"].(map[string]any)
			if result["decision"] != tc.decision || result["decidedVia"] != tc.via {
				t.Fatalf("result %v, want %s via %s", result, tc.decision, tc.via)
			}
			if tc.answer == "accept" && result["comment"] != "fine from the host" {
				t.Errorf("comment = %v", result["comment"])
			}
			if err := cmd.Wait(); err != nil {
				t.Fatalf("the TypeScript host: %v", err)
			}
		})
	}
}
