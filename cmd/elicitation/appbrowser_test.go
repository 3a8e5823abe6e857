package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/testenv"
)

// TestAppInChromium hosts the review's MCP App as the ext-apps SDK's host
// side does (testdata/apphost.mjs: a real TypeScript MCP client reads the
// ui:// page from this server, the SDK's AppBridge talks to it in a
// sandboxed frame under the spec's CSP, in headless Chromium) and decides
// an approval with a form (refused out of bounds first, then recorded
// once; the review page's later answer is refused with 409), a 500-option
// multi-select at 320 px (refused above its bound, then recorded) and a
// templated approval declined with a comment (the app shows the default
// view and the review link; no template or message script runs, nothing
// is fetched); on a deployment with reviewer sign-in the app shows the
// link and why, and decides nothing; a host that renders elicitations in
// apps (SEP-3118) has elicit_await's form elicitation rendered by the app,
// whose ElicitResult lands (a single-select accepted, an approval declined
// with the reviewer's comment under reviewerComment); a view offering a
// standing approval (standing, added by the host) shows its checkbox and
// the held fields as text, sends it with Approve only, and this server
// without sign-in refuses it, deciding nothing. axe-core checks every view.
func TestAppInChromium(t *testing.T) {
	testenv.Slow(t, "Chromium and the ext-apps host bridge")
	t.Parallel()
	node := testenv.Node(t)
	for _, pkg := range []string{"playwright-core", "@axe-core/playwright", "@modelcontextprotocol/ext-apps", "@modelcontextprotocol/client"} {
		testenv.NodeModule(t, filepath.Join(pkg, "package.json"))
	}
	chromium := os.Getenv("CHROMIUM_PATH")
	if chromium == "" {
		chromium = "/usr/bin/chromium"
	}
	if _, err := os.Stat(chromium); err != nil {
		t.Fatalf("the app test needs Chromium at %s (or CHROMIUM_PATH): run `apt-get install -y chromium`", chromium)
	}
	open := start(t, "--data-dir", t.TempDir(), "--mcp-app")
	// Sign-in is discovered on first use: an issuer nobody answers is
	// enough for a deployment that signs reviewers in.
	signedIn := start(t, "--data-dir", t.TempDir(), "--mcp-app",
		"--oidc-issuer", "http://127.0.0.1:9/", "--oidc-client-id", "c", "--oidc-client-secret", "s")
	plan, _ := json.Marshal(map[string]string{"mcp": open.MCPURL, "signedIn": signedIn.MCPURL, "chromium": chromium})

	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join(testenv.Root(t), "cmd", "elicitation", "testdata", "apphost.mjs"), string(plan))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node apphost.mjs: %v\nstderr:\n%s\nstdout:\n%s", err, stderr.String(), stdout.String())
	}
	var out struct {
		Results []struct {
			Name    string          `json:"name"`
			OK      bool            `json:"ok"`
			MS      int             `json:"ms"`
			Error   string          `json:"error"`
			Details json.RawMessage `json:"details"`
		}
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("node output: %v\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	want := map[string]bool{"approval-form": true, "selection-500": true, "decline-templated": true, "signed-in-refused": true, "app-elicitation": true, "standing-offer": true}
	for _, r := range out.Results {
		delete(want, r.Name)
		if !r.OK {
			t.Errorf("app flow %s failed: %s", r.Name, r.Error)
		} else {
			t.Logf("app flow %s ok (%d ms) %s", r.Name, r.MS, r.Details)
		}
	}
	if len(want) != 0 {
		t.Errorf("flows without a result: %v", want)
	}
}
