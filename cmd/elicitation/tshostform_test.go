package main

import (
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-elicitation/elicitation/internal/mcptools/pushtest"
	"github.com/mcp-elicitation/elicitation/internal/testenv"
)

// TestTypeScriptHostForm: a host on the TypeScript SDK (1.32.2, protocol
// 2025-11-25) that declares form elicitation, against the local server with
// --host-form: askInHost's elicit_await shows it the form, and its accept,
// decline and cancel land as the review page's would (cancel decides
// nothing: the page then does), each recorded with where it was decided;
// a form the host holds open past the await's wait bound is cancelled
// (notifications/cancelled), the await returns pending, and the host's
// late answer decides nothing: the page then does.
func TestTypeScriptHostForm(t *testing.T) {
	testenv.Slow(t, "TypeScript SDK")
	t.Parallel()
	m := start(t, "--data-dir", t.TempDir(), "--max-wait", "10s", "--host-form")
	node := testenv.Node(t)
	testenv.NodeModule(t, "@modelcontextprotocol/sdk/package.json")
	script := filepath.Join(testenv.Root(t), "cmd", "elicitation", "testdata", "tshostform.mjs")
	for _, tc := range []struct{ answer, awaited, decision, via string }{
		{"accept", "submitted", "submitted", "host-form"},
		{"decline", "declined", "declined", "host-form"},
		{"cancel", "pending", "submitted", "page"},
		{"hold", "pending", "submitted", "page"},
	} {
		t.Run(tc.answer, func(t *testing.T) {
			h := startTSHost(t, node, script, m.MCPURL, tc.answer)
			if v := h.waitFor("connected")["protocolVersion"]; v != "2025-11-25" {
				t.Fatalf("negotiated %v", v)
			}
			created := h.waitFor("created")["result"].(map[string]any)["structuredContent"].(map[string]any)
			if hf, _ := created["hostForm"].(string); !strings.HasPrefix(hf, "asked in the host") {
				t.Fatalf("hostForm = %q", hf)
			}
			p := h.waitFor("elicit")["params"].(map[string]any)
			if p["mode"] != "form" || !strings.HasPrefix(p["message"].(string), "Ship build 8?") || !strings.Contains(p["message"].(string), `"build": 8`) {
				t.Fatalf("form shown: %v", p)
			}
			awaited := h.waitFor("awaited")["result"].(map[string]any)["structuredContent"].(map[string]any)
			if awaited["status"] != tc.awaited {
				t.Fatalf("awaited %v, want %s", awaited, tc.awaited)
			}
			if tc.answer == "hold" {
				h.waitFor("cancelled")
			}
			if tc.answer == "cancel" || tc.answer == "hold" {
				pushtest.Decide(t, created["reviewUrl"].(string), "submitted")
				_, _ = io.WriteString(h.stdin, "decided\n")
			}
			result := h.waitFor("result")["result"].(map[string]any)["structuredContent"].(map[string]any)
			if result["decision"] != tc.decision || result["decidedVia"] != tc.via {
				t.Fatalf("result %v, want %s via %s", result, tc.decision, tc.via)
			}
			if tc.answer == "accept" && result["comment"] != "fine from the host" {
				t.Errorf("comment = %v", result["comment"])
			}
			if err := h.cmd.Wait(); err != nil {
				t.Fatalf("the TypeScript host: %v", err)
			}
		})
	}
}
