package docstest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/hostconfig"
	"github.com/mcp-elicitation/elicitation/internal/testenv"
)

// The host configurations, tried with the real clients that install here
// (package.json): the Claude Code CLI and mcp-remote as Claude Desktop
// starts it. What they are given is what hostconfig renders, which is what
// the banner, "elicitation connect" and docs/hosts.md show
// (TestDocsShowTheRenderedConfigs in internal/hostconfig).

// clientEnv is a scratch environment for a host's client: its own HOME
// (Claude Code keeps ~/.claude.json there, mcp-remote ~/.mcp-auth), Node 22
// and node_modules/.bin first on PATH, no update checks or telemetry, and
// nothing else of this process's environment (no credentials).
func clientEnv(t *testing.T, extra ...string) []string {
	t.Helper()
	home := t.TempDir()
	path := filepath.Dir(testenv.Node22(t)) + string(os.PathListSeparator) +
		filepath.Join(testenv.Root(t), "node_modules", ".bin") + string(os.PathListSeparator) + os.Getenv("PATH")
	return append([]string{
		"HOME=" + home, "PATH=" + path, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"NPM_CONFIG_UPDATE_NOTIFIER=false", "NO_COLOR=1",
	}, extra...)
}

// createKey makes an API key in dataDir with "elicitation keys create".
func createKey(t *testing.T, bin, dataDir string) string {
	t.Helper()
	out, err := exec.Command(bin, "keys", "create", "--data-dir", dataDir, "--principal", "host-test", "--json").Output()
	if err != nil {
		t.Fatalf("keys create: %v", err)
	}
	var k struct{ Key string }
	if err := json.Unmarshal(out, &k); err != nil || k.Key == "" {
		t.Fatalf("keys create printed %q: %v", out, err)
	}
	return k.Key
}

func rendered(t *testing.T, host, lang string, ep hostconfig.Endpoint) string {
	t.Helper()
	snippets, err := hostconfig.Render(host, ep)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range snippets {
		if s.Lang == lang {
			return s.Text
		}
	}
	t.Fatalf("%s renders no %s snippet for %+v", host, lang, ep)
	return ""
}

// TestClaudeCode adds the server to the Claude Code CLI both ways the
// docs give, each exactly as rendered: "claude mcp add …" in a shell, and
// "elicitation connect claude-code > .mcp.json" (project scope, approved
// as a user does once); then "claude mcp get elicitation" connects to the
// server (no model needed) and says whether it could.
func TestClaudeCode(t *testing.T) {
	testenv.Slow(t, "Claude Code CLI")
	t.Parallel() // it waits on the CLI and the server
	c := checker(t)
	testenv.NodeModule(t, ".bin/claude")
	cases := []struct {
		name      string
		keyed     bool
		key       string // "" for the key the server accepts
		connected bool
	}{
		{"without keys", false, "", true},
		{"with --require-api-key", true, "", true},
		{"with a wrong key", true, "elk_wrong", false},
	}
	for _, tc := range cases {
		dir := t.TempDir()
		var flags []string
		key := tc.key
		if tc.keyed {
			if good := createKey(t, c.Bin["elicitation"], dir); key == "" {
				key = good
			}
			flags = append(flags, "--require-api-key")
		}
		base := serveOn(t, c.Bin["elicitation"], "127.0.0.1", testenv.FreePort(t), dir, flags...)
		ep := hostconfig.Endpoint{URL: base + "/mcp", NeedsKey: tc.keyed}
		connect := shellWords(append([]string{c.Bin["elicitation"], "connect", "--url", ep.URL}, flags...)...) + " claude-code > .mcp.json"
		for route, script := range map[string]string{
			"claude mcp add": rendered(t, hostconfig.ClaudeCode, "sh", ep),
			".mcp.json":      connect,
		} {
			t.Run(tc.name+", "+route, func(t *testing.T) {
				env := clientEnv(t, hostconfig.KeyVariable+"="+key)
				project := t.TempDir() // claude's default scope is the project (the directory)
				claude := func(script string) (string, error) {
					ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
					defer cancel()
					cmd := exec.CommandContext(ctx, "bash", "-c", script)
					cmd.Dir, cmd.Env = project, env
					out, err := cmd.CombinedOutput()
					return string(out), err
				}
				if route == ".mcp.json" {
					approveProjectServers(t, env)
				}
				if out, err := claude(script); err != nil {
					t.Fatalf("%s: %v\n%s", script, err, out)
				}
				out, err := claude("claude mcp get elicitation")
				if tc.connected && (err != nil || !strings.Contains(out, "Connected")) {
					t.Fatalf("claude mcp get after %s: %v\n%s", script, err, out)
				}
				if !strings.Contains(out, ep.URL) {
					t.Errorf("claude mcp get does not show the URL:\n%s", out)
				}
				if !tc.connected && (strings.Contains(out, "✔ Connected") || !strings.Contains(out, "Failed to connect")) {
					t.Fatalf("claude mcp get with a wrong key does not say it failed:\n%s", out)
				}
			})
		}
	}
}

// approveProjectServers does what a user does once when claude asks about
// a project's .mcp.json: allow its servers (~/.claude/settings.json).
func approveProjectServers(t *testing.T, env []string) {
	t.Helper()
	for _, kv := range env {
		if home, ok := strings.CutPrefix(kv, "HOME="); ok {
			dir := filepath.Join(home, ".claude")
			if err := os.MkdirAll(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "settings.json"), []byte(`{"enableAllProjectMcpServers": true}`), 0o600); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatal("no HOME in the client's environment")
}

// shellWords quotes words for bash.
func shellWords(words ...string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}

// TestMCPRemote starts Claude Desktop's entry as Claude Desktop does (its
// command, its args, its env) and speaks MCP to it over stdio with the Go
// SDK's client: through mcp-remote to the running server. On [::1] the
// entry needs --allow-http, and without it mcp-remote refuses.
func TestMCPRemote(t *testing.T) {
	testenv.Slow(t, "mcp-remote")
	t.Parallel() // it waits on mcp-remote and the server
	c := checker(t)
	testenv.NodeModule(t, "mcp-remote")
	if ln, err := net.Listen("tcp", "[::1]:0"); err != nil {
		t.Fatalf("no IPv6 loopback to test [::1] on: %v", err)
	} else {
		_ = ln.Close()
	}
	cases := []struct {
		name, host string
		keyed      bool
		dropArg    string // an argument taken out of the rendered entry
		refused    bool
	}{
		{"127.0.0.1 with --require-api-key", "127.0.0.1", true, "", false},
		{"[::1]", "::1", false, "", false},
		{"[::1] without --allow-http", "::1", false, "--allow-http", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			var flags []string
			key := ""
			if tc.keyed {
				key = createKey(t, c.Bin["elicitation"], dir)
				flags = append(flags, "--require-api-key")
			}
			base := serveOn(t, c.Bin["elicitation"], tc.host, freePortOn(t, tc.host), dir, flags...)
			entry := desktopEntry(t, rendered(t, hostconfig.ClaudeDesktop, "json", hostconfig.Endpoint{URL: base + "/mcp", NeedsKey: tc.keyed}))
			args := entry.Args[:0:0]
			for _, a := range entry.Args {
				if a != tc.dropArg {
					args = append(args, a)
				}
			}
			var env []string
			for k, v := range entry.Env {
				env = append(env, k+"="+strings.ReplaceAll(v, "elk_…", key)) // "put your key in place of elk_…"
			}
			session, stderr, err := startEntry(t, entry.Command, args, clientEnv(t, env...))
			if tc.refused {
				if err == nil {
					t.Fatalf("mcp-remote %q connected over plain http to [::1] without --allow-http", args)
				}
				if !strings.Contains(stderr.String(), "allow-http") {
					t.Errorf("mcp-remote's refusal does not name --allow-http:\n%s", stderr.String())
				}
				return
			}
			if err != nil {
				t.Fatalf("%s %q: %v\n%s", entry.Command, args, err, stderr.String())
			}
			res, err := session.CallTool(context.Background(), &mcp.CallToolParams{Name: "elicit_approval", Arguments: map[string]any{"message": "Through mcp-remote?", "context": 1}})
			if err != nil || res.IsError {
				t.Fatalf("elicit_approval through mcp-remote: %v %+v\n%s", err, res, stderr.String())
			}
			b, _ := json.Marshal(res.StructuredContent)
			if !bytes.Contains(b, []byte(`"reviewUrl":"`+base+"/review/")) {
				t.Errorf("elicit_approval through mcp-remote: %s", b)
			}
		})
	}
}

type desktopServer struct {
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
}

func desktopEntry(t *testing.T, text string) desktopServer {
	t.Helper()
	var doc struct {
		MCPServers map[string]desktopServer `json:"mcpServers"`
	}
	if err := json.Unmarshal([]byte(text), &doc); err != nil {
		t.Fatal(err)
	}
	e, ok := doc.MCPServers["elicitation"]
	if !ok || e.Command == "" {
		t.Fatalf("no elicitation entry with a command in\n%s", text)
	}
	return e
}

// startEntry spawns a stdio server entry and connects an MCP client to it.
func startEntry(t *testing.T, command string, args, env []string) (*mcp.ClientSession, *testenv.SyncBuffer, error) {
	t.Helper()
	var path string
	for _, kv := range env {
		if p, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = p
		}
	}
	prog := command
	for _, dir := range filepath.SplitList(path) {
		if st, err := os.Stat(filepath.Join(dir, command)); err == nil && !st.IsDir() {
			prog = filepath.Join(dir, command)
			break
		}
	}
	var stderr testenv.SyncBuffer
	cmd := exec.Command(prog, args...)
	cmd.Dir, cmd.Env, cmd.Stderr = testenv.Root(t), env, &stderr // npx finds the pinned mcp-remote in node_modules
	// A guard for a busy machine: at load 33 the handshake through npx and
	// mcp-remote took more than 60 s.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "claude-desktop-test", Version: "1"}, nil)
	session, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		return nil, &stderr, err
	}
	t.Cleanup(func() { _ = session.Close() })
	return session, &stderr, nil
}

func freePortOn(t *testing.T, host string) int {
	t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
