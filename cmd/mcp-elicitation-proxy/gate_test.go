package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/testenv"
)

// The human gate's configuration errors are usage errors, found before the
// proxy starts anything.
func TestGateConfigurationErrors(t *testing.T) {
	cfg := writeConfig(t, "upstream:\n  url: http://127.0.0.1:1/mcp\nelicitation_service:\n  url: http://127.0.0.1:1/mcp\n  api_key_env: GATE_TEST_KEY\n")
	var stdout, stderr bytes.Buffer
	code := run([]string{"--config", cfg}, func(string) string { return "" }, &stdout, &stderr)
	if want := "elicitation_service.api_key_env names GATE_TEST_KEY, which is not set"; code != 2 || !strings.Contains(stderr.String(), want) {
		t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr.String(), want)
	}
	cfg = writeConfig(t, "upstream:\n  url: http://127.0.0.1:1/mcp\nelicitation_service:\n  embedded:\n    listen: 127.0.0.1:0\n"+
		"    sign_in:\n      issuer: https://id.example.com\n      client_id: web\n      client_secret_env: GATE_TEST_OIDC\n")
	stdout.Reset()
	stderr.Reset()
	code = run([]string{"--config", cfg}, func(string) string { return "" }, &stdout, &stderr)
	if want := "elicitation_service.embedded.sign_in.client_secret_env names GATE_TEST_OIDC, which is not set"; code != 2 || !strings.Contains(stderr.String(), want) {
		t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr.String(), want)
	}
	// --review-addr moves an embedded service's review pages; without one
	// it is a mistake.
	cfg = writeConfig(t, "upstream:\n  url: http://127.0.0.1:1/mcp\n")
	stdout.Reset()
	stderr.Reset()
	code = run([]string{"--config", cfg, "--review-addr", "127.0.0.1:0"}, func(string) string { return "" }, &stdout, &stderr)
	if want := "--review-addr: " + cfg + " embeds no elicitation service (elicitation_service.embedded)"; code != 2 || !strings.Contains(stderr.String(), want) {
		t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr.String(), want)
	}
}

// The built proxy on stdio with the worked configuration of docs/gate.md:
// the embedded service serves the review page the pending result names, and
// a host that can elicit approves in its own form.
func TestGateStdioEndToEnd(t *testing.T) {
	testenv.Slow(t, "server-everything")
	t.Parallel()
	nodeModule(t, "mcp-server-everything")
	root := repoRoot(t)
	raw, err := os.ReadFile(filepath.Join(root, "examples", "gate-everything.config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	// The example's review address is fixed (127.0.0.1:8081, as the docs
	// show it); --review-addr moves it to a free port.
	cfg := writeConfig(t, strings.Replace(string(raw), "wait_seconds: 20", "wait_seconds: 1", 1))
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	connect := func(elicit mcp.ClientOptions) (*mcp.ClientSession, *testenv.SyncBuffer) {
		cmd := exec.Command(binary, "--config", cfg, "--review-addr", "127.0.0.1:0")
		cmd.Dir = root
		stderr := &testenv.SyncBuffer{}
		cmd.Stderr = stderr
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "gate-e2e", Version: "1"}, &elicit).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			t.Fatalf("connect: %v\n%s", err, stderr.String())
		}
		t.Cleanup(func() { _ = cs.Close() })
		return cs, stderr
	}
	sum := func(cs *mcp.ClientSession) *mcp.CallToolResult {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "get-sum", Arguments: map[string]any{"a": 500, "b": 1}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}

	// A host without elicitation: the review page.
	cs, stderr := connect(mcp.ClientOptions{})
	res := sum(cs)
	// The worked configuration has no reviewer sign-in: the proxy says on
	// standard error (stdout carries the protocol, which the client read
	// cleanly) what that does not stop.
	if !strings.Contains(stderr.String(), "level=WARN") || !strings.Contains(stderr.String(), "no reviewer sign-in") || !strings.Contains(stderr.String(), "approve its own gated calls") {
		t.Errorf("no start-up warning about sign-in on stderr:\n%s", stderr.String())
	}
	var p struct {
		Error     string `json:"error"`
		ReviewURL string `json:"reviewUrl"`
	}
	b, _ := json.Marshal(res.StructuredContent)
	_ = json.Unmarshal(b, &p)
	if p.Error != "elicitation_pending" || !strings.HasPrefix(p.ReviewURL, "http://127.0.0.1:") {
		t.Fatalf("want elicitation_pending with a review URL, got %s", b)
	}
	page, err := http.Get(p.ReviewURL)
	if err != nil {
		t.Fatal(err)
	}
	page.Body.Close()
	if page.StatusCode != http.StatusOK {
		t.Errorf("the embedded review page answered %d", page.StatusCode)
	}

	// A host that elicits: its own form, and the call goes through.
	var asked []string
	cs, stderr = connect(mcp.ClientOptions{ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		asked = append(asked, r.Params.Message)
		return &mcp.ElicitResult{Action: "accept"}, nil
	}})
	res = sum(cs)
	if len(res.Content) == 0 || res.Content[0].(*mcp.TextContent).Text != "The sum of 500 and 1 is 501." {
		t.Fatalf("approved on the host: %+v\n%s", res, stderr.String())
	}
	if len(asked) != 1 || !strings.Contains(asked[0], "Let the agent add these numbers?") {
		t.Errorf("the host was asked %q", asked)
	}
}
