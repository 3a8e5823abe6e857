package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/testenv"
)

// TestInspectorAppElicitation drives the MCP Inspector 2.x web client
// (npm @modelcontextprotocol/inspector, started by its own launcher on
// Node 22, in headless Chromium: testdata/inspector.mjs) against the local
// server with the MCP App on and push on, over streamable HTTP on a
// 2025-11-25 session. The Inspector negotiates app-rendered elicitations
// (SEP-3118) and declares URL elicitation too; elicit_approval, run from
// its Tools tab, pushes it nothing, and elicit_await's form elicitation
// names the app's page: the Inspector renders the app in its sandbox and
// the approval clicked inside the app lands (app-approve); when the app
// cannot be shown (the sandbox's page does not load), the Inspector's own
// form answers the same elicitation (fallback). Each is asserted through
// the server: the decision, the comment typed, via host-form, and the
// audit trail's one offer, the app-rendered elicitation.
func TestInspectorAppElicitation(t *testing.T) {
	testenv.Slow(t, "the MCP Inspector web client in Chromium")
	t.Parallel()
	node := testenv.Node22(t)
	launcher := testenv.NodeModule(t, "@modelcontextprotocol/inspector/clients/launcher/build/index.js")
	testenv.NodeModule(t, "playwright-core/package.json")
	chromium := os.Getenv("CHROMIUM_PATH")
	if chromium == "" {
		chromium = "/usr/bin/chromium"
	}
	if _, err := os.Stat(chromium); err != nil {
		t.Fatalf("the Inspector test needs Chromium at %s (or CHROMIUM_PATH): run `apt-get install -y chromium`", chromium)
	}
	m := start(t, "--data-dir", t.TempDir(), "--mcp-app", "--max-wait", "40s")
	web, token := startInspectorWeb(t, node, launcher)

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	plan, _ := json.Marshal(map[string]string{"inspector": web, "token": token, "mcp": m.MCPURL, "chromium": chromium})
	cmd := exec.CommandContext(ctx, node, filepath.Join(testenv.Root(t), "cmd", "elicitation", "testdata", "inspector.mjs"), string(plan))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node inspector.mjs: %v\nstderr:\n%s\nstdout:\n%s", err, stderr.String(), stdout.String())
	}
	var out struct {
		Results []struct {
			Name, Error, ElicitationID string
			OK                         bool
			MS                         int
		}
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("node output: %v\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	comments := map[string]string{
		"app-approve": "ship it, from the app in the Inspector",
		"fallback":    "fine, from the Inspector's own form",
	}
	s := agent(t, m.MCPURL)
	for _, r := range out.Results {
		want, known := comments[r.Name]
		delete(comments, r.Name)
		switch {
		case !known:
			t.Errorf("unexpected flow %s", r.Name)
			continue
		case !r.OK:
			t.Errorf("Inspector flow %s failed: %s", r.Name, r.Error)
			continue
		}
		t.Logf("Inspector flow %s ok (%d ms)", r.Name, r.MS)
		res := call(t, s, "elicit_result", map[string]any{"elicitationId": r.ElicitationID})
		if res["decision"] != "submitted" || res["comment"] != want || res["decidedVia"] != "host-form" {
			t.Errorf("%s: elicit_result %v, want submitted via host-form with comment %q", r.Name, res, want)
		}
		tr, err := m.Service.OperatorAudit(context.Background(), r.ElicitationID)
		if err != nil {
			t.Fatal(err)
		}
		var offers []string
		for _, e := range tr.Entries {
			if e.Action == elicitation.ActionPushed {
				offers = append(offers, e.Detail)
			}
		}
		if len(offers) != 1 || offers[0] != "app-rendered elicitation in the host" {
			t.Errorf("%s: offered the host %q, want only the app-rendered elicitation", r.Name, offers)
		}
	}
	if len(comments) != 0 {
		t.Errorf("flows without a result: %v\nstderr:\n%s", comments, stderr.String())
	}
}

// startInspectorWeb starts the Inspector's web client (its launcher's
// --web: the SPA, its API with the MCP proxy, the MCP Apps sandbox) on
// a free loopback port, with a scratch home, catalog and secret store,
// and returns its address and the launch's API token (the deep link's
// CSRF gate). It stops it when t ends.
func startInspectorWeb(t *testing.T, node, launcher string) (web, token string) {
	t.Helper()
	dir := t.TempDir()
	port := testenv.FreePort(t)
	token = rand.Text()
	cmd := exec.Command(node, launcher, "--web")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"HOME="+dir,
		"HOST=127.0.0.1",
		fmt.Sprintf("CLIENT_PORT=%d", port),
		"MCP_INSPECTOR_API_TOKEN="+token,
		"MCP_CATALOG_PATH="+filepath.Join(dir, "catalog.json"),
		"MCP_STORAGE_DIR="+filepath.Join(dir, "storage"),
		"MCP_INSPECTOR_SECRET_STORE=memory",
		"MCP_AUTO_OPEN_ENABLED=false",
		// The sandbox and the app origin on ports of the kernel's choosing:
		// the web client learns them from its own server.
		"MCP_SANDBOX_PORT=0",
		"MCP_APP_ORIGIN_PORT=0",
	)
	var output testenv.SyncBuffer
	cmd.Stdout, cmd.Stderr = &output, &output
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start the Inspector: %v", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
	})
	web = fmt.Sprintf("http://127.0.0.1:%d", port)
	if _, ok := output.WaitFor(60*time.Second, func(s string) bool {
		return strings.Contains(s, "is up and running") && strings.Contains(s, "Sandbox (MCP Apps): http://")
	}); !ok {
		t.Fatalf("the Inspector did not start:\n%s", output.String())
	}
	return web, token
}
