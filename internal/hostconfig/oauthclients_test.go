package hostconfig_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/hostconfig"
	"github.com/mcp-elicitation/elicitation/internal/testenv"
)

// protectedResource is a stand-in for /mcp with OAuth on, as far as a
// host goes before a person signs in: a 401 naming the protected-resource
// metadata (RFC 9728), the authorization server's metadata (RFC 8414)
// with a registration endpoint, and registration (RFC 7591), whose
// requests it hands to registered. The server's own authorization server
// is tested where it is built; this tests what the hosts do with the
// configuration "connect --auth oauth" renders.
func protectedResource(t *testing.T) (mcpURL string, registered <-chan map[string]any) {
	t.Helper()
	regs := make(chan map[string]any, 8)
	var base string
	mux := http.NewServeMux()
	reply := func(w http.ResponseWriter, status int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(v)
	}
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+base+`/.well-known/oauth-protected-resource/mcp"`)
		w.WriteHeader(http.StatusUnauthorized)
	})
	mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		reply(w, http.StatusOK, map[string]any{"resource": base + "/mcp", "authorization_servers": []string{base}})
	})
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		reply(w, http.StatusOK, map[string]any{
			"issuer": base, "authorization_endpoint": base + "/authorize", "token_endpoint": base + "/token",
			"registration_endpoint": base + "/register", "response_types_supported": []string{"code"},
			"grant_types_supported": []string{"authorization_code", "refresh_token"}, "code_challenge_methods_supported": []string{"S256"},
			"token_endpoint_auth_methods_supported": []string{"none"},
		})
	})
	mux.HandleFunc("POST /register", func(w http.ResponseWriter, r *http.Request) {
		var req map[string]any
		b, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(b, &req); err != nil {
			reply(w, http.StatusBadRequest, map[string]any{"error": "invalid_client_metadata"})
			return
		}
		client := map[string]any{"client_id": "registered-client"}
		for k, v := range req {
			client[k] = v
		}
		select {
		case regs <- req: // the test's from now on
		default:
		}
		reply(w, http.StatusCreated, client)
	})
	// The address is known, and base set, before the first request can
	// arrive: a stray connection to a reused port must not race the write.
	srv := httptest.NewUnstartedServer(mux)
	base = "http://" + srv.Listener.Addr().String()
	srv.Start()
	t.Cleanup(srv.Close)
	return base + "/mcp", regs
}

// hostEnv is a scratch environment for a host's client: its own HOME,
// Node 22 and node_modules/.bin first on PATH, no browser, no update
// checks, nothing else of this process's environment.
func hostEnv(t *testing.T) []string {
	t.Helper()
	home := t.TempDir()
	path := filepath.Dir(testenv.Node22(t)) + string(os.PathListSeparator) +
		filepath.Join(testenv.Root(t), "node_modules", ".bin") + string(os.PathListSeparator) + os.Getenv("PATH")
	return []string{
		"HOME=" + home, "PATH=" + path, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "BROWSER=true",
		"DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"NPM_CONFIG_UPDATE_NOTIFIER=false", "NO_COLOR=1",
	}
}

func oauthSnippet(t *testing.T, host, lang, mcpURL string) string {
	t.Helper()
	snippets, err := hostconfig.Render(host, hostconfig.Endpoint{URL: mcpURL, NeedsKey: true, Auth: hostconfig.AuthOAuth})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range snippets {
		if s.Lang == lang {
			return s.Text
		}
	}
	t.Fatalf("%s renders no %s snippet with --auth oauth", host, lang)
	return ""
}

// TestClaudeCodeTakesTheOAuthConfig: "claude mcp add" exactly as
// "connect --auth oauth claude-code" renders it leaves the Claude Code CLI
// (package.json's) seeing a server that needs the person's sign-in, which
// "claude mcp login" then runs, rather than one that failed to connect.
func TestClaudeCodeTakesTheOAuthConfig(t *testing.T) {
	testenv.Slow(t, "Claude Code CLI")
	t.Parallel()
	testenv.NodeModule(t, ".bin/claude")
	mcpURL, _ := protectedResource(t)
	env, project := hostEnv(t), t.TempDir()
	claude := func(script string) string {
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, "bash", "-c", script)
		cmd.Dir, cmd.Env = project, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", script, err, out)
		}
		return string(out)
	}
	add := oauthSnippet(t, hostconfig.ClaudeCode, "sh", mcpURL)
	claude(add)
	if out := claude("claude mcp get elicitation"); !strings.Contains(out, "Needs authentication") || !strings.Contains(out, mcpURL) {
		t.Fatalf("claude mcp get after %s does not say the server needs a sign-in:\n%s", add, out)
	}
}

// TestMCPRemoteTakesTheOAuthConfig: Claude Desktop's entry exactly as
// "connect --auth oauth claude-desktop" renders it, started as Claude
// Desktop starts it, registers mcp-remote (dynamic client registration)
// with a loopback redirect and no client secret, and waits for the person.
func TestMCPRemoteTakesTheOAuthConfig(t *testing.T) {
	testenv.Slow(t, "mcp-remote")
	t.Parallel()
	testenv.NodeModule(t, "mcp-remote")
	mcpURL, registered := protectedResource(t)
	var doc struct {
		MCPServers map[string]struct {
			Command string            `json:"command"`
			Args    []string          `json:"args"`
			Env     map[string]string `json:"env"`
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal([]byte(oauthSnippet(t, hostconfig.ClaudeDesktop, "json", mcpURL)), &doc); err != nil {
		t.Fatal(err)
	}
	entry := doc.MCPServers["elicitation"]
	if entry.Env != nil || strings.Contains(strings.Join(entry.Args, " "), "--header") {
		t.Fatalf("the OAuth entry carries a header or its env: %+v", entry)
	}
	cmd := exec.Command(entry.Command, entry.Args...)
	cmd.Dir, cmd.Env = testenv.Root(t), hostEnv(t)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // npx starts node: stop both
	var stderr testenv.SyncBuffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe() // open, as Claude Desktop keeps it
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = stdin.Close()
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	select {
	case req := <-registered:
		uris, _ := req["redirect_uris"].([]any)
		if len(uris) != 1 {
			t.Fatalf("mcp-remote registered %v, want one redirect URI", req)
		}
		if u, _ := uris[0].(string); !strings.HasPrefix(u, "http://localhost:") && !strings.HasPrefix(u, "http://127.0.0.1:") {
			t.Errorf("mcp-remote's redirect URI %q is not on loopback", u)
		}
		if req["token_endpoint_auth_method"] != "none" {
			t.Errorf("mcp-remote registered as a confidential client: %v", req)
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("mcp-remote %q never registered:\n%s", entry.Args, stderr.String())
	}
}
