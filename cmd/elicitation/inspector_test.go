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
	"slices"
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
// the approval clicked inside the app lands (app-approve), as does a
// selection picked in it (app-selection); when the app
// cannot be shown (the sandbox's page does not load), the Inspector's own
// form answers the same elicitation (fallback). On 2026-07-28 (the
// catalog's second row for the server) the Inspector runs elicit_approval
// as a task and the app answers the task's input request (task-app), and
// the Inspector shows the task's result, which the creating tool's listed
// output schema admits (it validates results against it).
// Each is asserted through the server: the decision, the comment typed,
// via host-form, and the offers in the audit trail.
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
	const modernRow = "elicitation-2026-07-28"
	web, token := startInspectorWeb(t, node, launcher, modernRow, m.MCPURL)

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	plan, _ := json.Marshal(map[string]string{"inspector": web, "token": token, "mcp": m.MCPURL, "chromium": chromium, "modernRow": modernRow})
	cmd := exec.CommandContext(ctx, node, filepath.Join(testenv.Root(t), "cmd", "elicitation", "testdata", "inspector.mjs"), string(plan))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node inspector.mjs: %v\nstderr:\n%s\nstdout:\n%s", err, stderr.String(), stdout.String())
	}
	var out struct {
		Results []struct {
			Name, Error, ElicitationID, ShownResult string
			OK                                      bool
			MS                                      int
		}
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("node output: %v\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	// Each flow's comment, and the offers its request's audit trail
	// records: elicit_await's app-rendered elicitation once; none for the
	// task, whose input request is offered on each tasks/get.
	flows := map[string]struct {
		comment string
		offers  []string
	}{
		"app-approve":   {"ship it, from the app in the Inspector", []string{"app-rendered elicitation in the host"}},
		"app-selection": {"closer to users", []string{"app-rendered elicitation in the host"}},
		"fallback":      {"fine, from the Inspector's own form", []string{"app-rendered elicitation in the host"}},
		"task-app":      {"release it, from the task's app", nil},
	}
	s := agent(t, m.MCPURL)
	ids := map[string]bool{}
	for _, r := range out.Results {
		ids[r.ElicitationID] = true
	}
	for _, r := range out.Results {
		want, known := flows[r.Name]
		delete(flows, r.Name)
		switch {
		case !known:
			t.Errorf("unexpected flow %s", r.Name)
			continue
		case !r.OK:
			t.Errorf("Inspector flow %s failed: %s", r.Name, r.Error)
			continue
		case r.Name == "task-app":
			// The task's request is the one the other flows did not create.
			r.ElicitationID = otherRequest(t, m, ids)
			if r.ShownResult != `"decision": "submitted"` {
				t.Errorf("the Inspector shows for the task's result %q, want its decision", r.ShownResult)
			}
		}
		t.Logf("Inspector flow %s ok (%d ms)", r.Name, r.MS)
		res := call(t, s, "elicit_result", map[string]any{"elicitationId": r.ElicitationID})
		if r.Name == "app-selection" && !slices.Equal(anySlice(res["selectedIds"]), []any{"us"}) {
			t.Errorf("%s: selectedIds %v, want [us]", r.Name, res["selectedIds"])
		}
		if res["decision"] != "submitted" || res["comment"] != want.comment || res["decidedVia"] != "host-form" {
			t.Errorf("%s: elicit_result %v, want submitted via host-form with comment %q", r.Name, res, want.comment)
		}
		if got := offers(t, m, r.ElicitationID); !slices.Equal(got, want.offers) {
			t.Errorf("%s: offered the host %q, want %q", r.Name, got, want.offers)
		}
	}
	if len(flows) != 0 {
		t.Errorf("flows without a result: %v\nstderr:\n%s", flows, stderr.String())
	}
}

func anySlice(v any) []any { s, _ := v.([]any); return s }

// offers are the pushes request id's audit trail records (how each was
// offered to the host).
func offers(t *testing.T, m *Main, id string) []string {
	t.Helper()
	tr, err := m.Service.OperatorAudit(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range tr.Entries {
		if e.Action == elicitation.ActionPushed {
			out = append(out, e.Detail)
		}
	}
	return out
}

// otherRequest is the one request of the server's (all anonymous: no API
// keys) not in known.
func otherRequest(t *testing.T, m *Main, known map[string]bool) string {
	t.Helper()
	states, _, err := m.Service.ListOwned(context.Background(), elicitation.Anonymous, elicitation.OwnedPosition{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	var other []string
	for _, st := range states {
		if !known[st.ID] {
			other = append(other, st.ID)
		}
	}
	if len(other) != 1 {
		t.Fatalf("requests besides the other flows': %v", other)
	}
	return other[0]
}

// startInspectorWeb starts the Inspector's web client (its launcher's
// --web: the SPA, its API with the MCP proxy, the MCP Apps sandbox) on
// a free loopback port, with a scratch home and secret store and a
// catalog holding one server, mcpURL as the row named modernRow, pinned to
// protocol 2026-07-28; it returns its address and the launch's API token
// (the deep link's CSRF gate). It stops it when t ends.
func startInspectorWeb(t *testing.T, node, launcher, modernRow, mcpURL string) (web, token string) {
	t.Helper()
	dir := t.TempDir()
	catalog, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		modernRow: map[string]string{"type": "streamable-http", "url": mcpURL, "protocolEra": "modern"},
	}})
	if err := os.WriteFile(filepath.Join(dir, "catalog.json"), catalog, 0o600); err != nil {
		t.Fatal(err)
	}
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
