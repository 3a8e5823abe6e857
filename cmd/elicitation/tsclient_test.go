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
			h := startTSHost(t, node, script, m.MCPURL, mode)
			if v := h.waitFor("connected")["protocolVersion"]; v != "2025-11-25" {
				t.Fatalf("negotiated %v", v)
			}
			created := h.waitFor("created")["result"].(map[string]any)["structuredContent"].(map[string]any)
			id, reviewURL := created["elicitationId"].(string), created["reviewUrl"].(string)
			if mode == "url" {
				p := h.waitFor("elicit")["params"].(map[string]any)
				if p["mode"] != "url" || p["url"] != reviewURL || p["elicitationId"] != id || p["message"] != "Ship build 7?" {
					t.Fatalf("pushed %v", p)
				}
			}
			pushtest.Decide(t, reviewURL, "submitted")
			_, _ = io.WriteString(h.stdin, "decided\n")
			awaited := h.waitFor("awaited")["result"].(map[string]any)["structuredContent"]
			result := h.waitFor("result")["result"].(map[string]any)["structuredContent"].(map[string]any)
			if fmt.Sprint(awaited) != "map[status:submitted]" || result["decision"] != "submitted" {
				t.Fatalf("awaited %v, result %v", awaited, result)
			}
			if mode == "url" {
				if got := h.waitFor("complete")["params"].(map[string]any)["elicitationId"]; got != id {
					t.Fatalf("complete notice for %v, want %s", got, id)
				}
			}
			_, _ = io.WriteString(h.stdin, "done\n")
			if err := h.cmd.Wait(); err != nil {
				t.Fatalf("the TypeScript host: %v", err)
			}
			if _, ok := h.seen["elicit"]; ok != (mode == "url") {
				t.Errorf("pushed: %v, want %v", ok, mode == "url")
			}
		})
	}
}

// tsHost is a TypeScript host script (node script args...) that prints
// one JSON event per line and reads its cues on stdin. The process ends
// with the test.
type tsHost struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.Writer
	events chan map[string]any
	seen   map[string]map[string]any // every event so far, by name
}

func startTSHost(t *testing.T, node, script string, args ...string) *tsHost {
	t.Helper()
	h := &tsHost{t: t, cmd: exec.Command(node, append([]string{script}, args...)...), events: make(chan map[string]any, 16), seen: map[string]map[string]any{}}
	h.stdin, _ = h.cmd.StdinPipe()
	stdout, _ := h.cmd.StdoutPipe()
	stderr := &testenv.SyncBuffer{}
	h.cmd.Stderr = stderr
	if err := h.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = h.cmd.Process.Kill()
		_ = h.cmd.Wait()
		if t.Failed() {
			t.Logf("node stderr:\n%s", stderr.String())
		}
	})
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var ev map[string]any
			if json.Unmarshal(sc.Bytes(), &ev) == nil {
				h.events <- ev
			}
		}
		close(h.events)
	}()
	return h
}

// waitFor returns the named event, failing the test if the host exits
// first or stays silent for 30 s.
func (h *tsHost) waitFor(name string) map[string]any {
	h.t.Helper()
	deadline := time.After(30 * time.Second)
	for h.seen[name] == nil {
		select {
		case ev, ok := <-h.events:
			if !ok {
				h.t.Fatalf("the TypeScript host exited before %q", name)
			}
			h.seen[ev["event"].(string)] = ev
		case <-deadline:
			h.t.Fatalf("no %q from the TypeScript host", name)
		}
	}
	return h.seen[name]
}
