package hostconfig_test

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/mcp-elicitation/elicitation/internal/hostconfig"
	"github.com/mcp-elicitation/elicitation/internal/hostconfig/hostconfigtest"
	"github.com/mcp-elicitation/elicitation/internal/testenv"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

var endpoints = map[string]hostconfig.Endpoint{
	"local":    {URL: "http://127.0.0.1:8080/mcp"},
	"keys":     {URL: "http://127.0.0.1:8080/mcp", NeedsKey: true},
	"deployed": {URL: "https://a1b2c3d4e5.execute-api.eu-west-1.amazonaws.com/mcp", NeedsKey: true},
	"lan":      {URL: "http://192.168.1.20:8080/mcp"},
	"ipv6":     {URL: "http://[::1]:8080/mcp", NeedsKey: true},
	"oauth":    {URL: "https://a1b2c3d4e5.execute-api.eu-west-1.amazonaws.com/mcp", NeedsKey: true, Auth: hostconfig.AuthOAuth},
	"authless": {URL: "https://elicitation.example.com/mcp"},
}

// mcp-remote takes plain http without --allow-http for localhost and
// 127.0.0.1 only (TestMCPRemote in internal/docstest runs the real one on
// [::1]); the Claude Desktop entry adds it everywhere else.
func TestClaudeDesktopAllowHTTP(t *testing.T) {
	for u, want := range map[string]bool{
		"http://127.0.0.1:8080/mcp":    false,
		"http://localhost:8080/mcp":    false,
		"http://[::1]:8080/mcp":        true,
		"http://192.168.1.20:8080/mcp": true,
		"https://example.test/mcp":     false,
	} {
		snippets, err := hostconfig.Render(hostconfig.ClaudeDesktop, hostconfig.Endpoint{URL: u})
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(snippets[0].Text, `"--allow-http"`); got != want {
			t.Errorf("%s: --allow-http %v, want %v\n%s", u, got, want, snippets[0].Text)
		}
	}
}

// Every host's first snippet is its configuration file's (what
// "elicitation connect HOST > FILE" writes); commands come after it. The
// Inspector has no file: its first snippet is the CLI's command.
func TestFileFirst(t *testing.T) {
	for _, h := range hostconfig.Hosts() {
		if h.Name == hostconfig.Inspector {
			continue
		}
		snippets, _ := hostconfig.Render(h.Name, endpoints["keys"])
		if first := snippets[0]; first.Lang == "sh" {
			t.Errorf("%s: the first snippet is a command (%s)", h.Name, first.Text)
		}
	}
}

// TestRenderIsValid: every rendered configuration parses and has its
// host's documented shape, and carries the Authorization header exactly
// when the endpoint needs a key.
func TestRenderIsValid(t *testing.T) {
	for epName, ep := range endpoints {
		for _, h := range hostconfig.Hosts() {
			snippets, err := hostconfig.Render(h.Name, ep)
			if err != nil {
				t.Fatal(err)
			}
			if len(snippets) == 0 {
				t.Fatalf("%s %s: nothing rendered", h.Name, epName)
			}
			for _, s := range snippets {
				var doc any
				switch s.Lang {
				case "json":
					if err := json.Unmarshal([]byte(s.Text), &doc); err != nil {
						t.Fatalf("%s %s: %v\n%s", h.Name, epName, err, s.Text)
					}
				case "yaml":
					if err := yaml.Unmarshal([]byte(s.Text), &doc); err != nil {
						t.Fatalf("%s %s: %v\n%s", h.Name, epName, err, s.Text)
					}
				default:
					if !strings.Contains(s.Text, ep.URL) {
						t.Errorf("%s %s: %q lacks the URL", h.Name, epName, s.Text)
					}
					continue
				}
				if err := hostconfigtest.Validate(h.Name, doc); err != nil {
					t.Errorf("%s %s: rendered config is refused: %v\n%s", h.Name, epName, err, s.Text)
				}
				want := ep.NeedsKey && ep.Auth != hostconfig.AuthOAuth
				if got := strings.Contains(s.Text, "Authorization"); got != want {
					t.Errorf("%s %s: Authorization present=%v, want %v\n%s", h.Name, epName, got, want, s.Text)
				}
			}
		}
	}
}

// TestRenderGolden keeps the exact text (what docs/hosts.md shows) under
// review: go test ./internal/hostconfig/ -update rewrites it. The
// connectors appear where the URL is one they reach (https).
func TestRenderGolden(t *testing.T) {
	for _, epName := range []string{"local", "deployed", "lan", "ipv6", "oauth", "authless"} {
		var b strings.Builder
		for _, h := range append(hostconfig.Hosts(), hostconfig.Connectors()...) {
			snippets, err := hostconfig.Render(h.Name, endpoints[epName])
			if err != nil && !h.Connector {
				t.Fatal(err)
			}
			for _, s := range snippets {
				b.WriteString("== " + h.Title + " — " + s.Where + " (" + s.Lang + ")\n" + s.Text + "\n\n")
			}
		}
		path := filepath.Join("testdata", epName+".golden")
		if *update {
			if err := os.MkdirAll("testdata", 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run with -update)", err)
		}
		if b.String() != string(want) {
			t.Errorf("%s differs from the rendering (run with -update and review the diff):\n%s", path, b.String())
		}
	}
}

func TestValidateRefuses(t *testing.T) {
	cases := []struct{ host, doc, want string }{
		{"claude-code", `{"mcpServers":{"e":{"url":"http://x/mcp"}}}`, `need "type": "http"`},
		{"claude-desktop", `{"mcpServers":{"e":{"type":"http","url":"http://x/mcp"}}}`, "mcp-remote"},
		{"vscode", `{"servers":{"e":{"url":"http://x/mcp"}}}`, `needs "type"`},
		{"vscode", `{"mcpServers":{"e":{"type":"http","url":"http://x/mcp"}}}`, `not "mcpServers"`},
		{"cursor", `{"mcpServers":{"e":{"url":"http://x/mcp","command":"npx"}}}`, "both url and command"},
		{"cursor", `{"mcpServers":{"e":{"url":"ftp://x/mcp"}}}`, "http:// or https://"},
		{"cursor", `{"mcpServers":{"e":{"url":"http://x/mcp","headers":{"Authorization":"elk_x"}}}}`, "Bearer"},
		{"goose", `{"extensions":{"e":{"enabled":true,"type":"streamable_http","name":"e"}}}`, "uri"},
		{"goose", `{"extensions":{"e":{"enabled":true,"type":"http","name":"e","uri":"http://x/mcp"}}}`, "streamable_http"},
		{"nope", `{}`, "unknown host"},
	}
	for _, tc := range cases {
		var doc any
		if err := json.Unmarshal([]byte(tc.doc), &doc); err != nil {
			t.Fatal(err)
		}
		err := hostconfigtest.Validate(tc.host, doc)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %s: got %v, want an error saying %q", tc.host, tc.doc, err, tc.want)
		}
	}
}

// docs/hosts.md shows exactly what Render prints ("elicitation connect
// HOST"), for the local server and for a deployment; the Inspector, which
// is for trying the tools by hand, for the local server without and with
// API keys; the connectors (claude.ai, ChatGPT), for a deployment only, the
// URL and the steps "connect" prints.
func TestDocsShowTheRenderedConfigs(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(testenv.Root(t), "docs", "hosts.md"))
	if err != nil {
		t.Fatal(err)
	}
	shown := map[string]func(host string) bool{
		"local":    func(string) bool { return true },
		"deployed": func(host string) bool { return host != hostconfig.Inspector },
		"keys":     func(host string) bool { return host == hostconfig.Inspector },
	}
	for _, epName := range []string{"local", "deployed", "keys"} {
		for _, h := range append(hostconfig.Hosts(), hostconfig.Connectors()...) {
			if h.Connector && epName != "deployed" {
				continue // they take a public https URL only
			}
			if !shown[epName](h.Name) {
				continue
			}
			snippets, _ := hostconfig.Render(h.Name, endpoints[epName])
			for _, s := range snippets {
				if s.Lang == "text" && !h.Connector {
					continue // described in prose
				}
				shown := "\n" + s.Text + "\n```"
				if s.Lang == "url" {
					shown = "```text\n" + s.Text + "\n" // then the steps
				}
				if !strings.Contains(string(doc), shown) {
					t.Errorf("docs/hosts.md does not show the %s %s configuration (%s) as rendered:\n%s", epName, h.Title, s.Where, s.Text)
				}
			}
		}
	}
}

// TestAuth: which credential each host's configuration carries, for each
// --auth and endpoint, and the refusals: a connector sends no API key, and
// takes only a public https URL.
func TestAuth(t *testing.T) {
	const deployed = "https://a1b2c3d4e5.execute-api.eu-west-1.amazonaws.com/mcp"
	cases := []struct {
		host    string
		ep      hostconfig.Endpoint
		header  bool   // the configuration carries the Authorization header
		signIn  bool   // the person signs in (SignIn says how)
		text    string // a snippet says this
		refusal string // Render refuses, saying this
	}{
		{host: "claude-code", ep: hostconfig.Endpoint{URL: deployed, NeedsKey: true}, header: true},
		{host: "claude-code", ep: hostconfig.Endpoint{URL: deployed, NeedsKey: true, Auth: hostconfig.AuthKey}, header: true},
		{host: "claude-code", ep: hostconfig.Endpoint{URL: deployed, NeedsKey: true, Auth: hostconfig.AuthOAuth}, signIn: true, text: "claude mcp add --transport http elicitation " + deployed},
		{host: "claude-code", ep: hostconfig.Endpoint{URL: "http://127.0.0.1:8080/mcp", Auth: hostconfig.AuthKey}},
		{host: "claude-code", ep: hostconfig.Endpoint{URL: "http://127.0.0.1:8080/mcp", Auth: hostconfig.AuthOAuth}, signIn: true},
		{host: "vscode", ep: hostconfig.Endpoint{URL: deployed, NeedsKey: true, Auth: hostconfig.AuthOAuth}, signIn: true, text: "code --add-mcp"},
		{host: "cursor", ep: hostconfig.Endpoint{URL: deployed, NeedsKey: true, Auth: hostconfig.AuthOAuth}, signIn: true},
		{host: "claude-desktop", ep: hostconfig.Endpoint{URL: deployed, NeedsKey: true, Auth: hostconfig.AuthOAuth}, signIn: true, text: `"mcp-remote"`},
		{host: "goose", ep: hostconfig.Endpoint{URL: deployed, NeedsKey: true, Auth: hostconfig.AuthOAuth}, signIn: true, text: "goose session --with-streamable-http-extension"},
		{host: "inspector", ep: hostconfig.Endpoint{URL: deployed, NeedsKey: true, Auth: hostconfig.AuthOAuth}, signIn: true, text: "--method tools/list"},
		{host: "claude-ai", ep: hostconfig.Endpoint{URL: deployed, NeedsKey: true}, signIn: true, text: "then Connect"},
		{host: "claude-ai", ep: hostconfig.Endpoint{URL: deployed}, text: "without signing in"},
		{host: "chatgpt", ep: hostconfig.Endpoint{URL: deployed, NeedsKey: true, Auth: hostconfig.AuthOAuth}, signIn: true, text: "Authentication: OAuth"},
		{host: "chatgpt", ep: hostconfig.Endpoint{URL: deployed}, text: "Authentication: No authentication"},
		{host: "claude-ai", ep: hostconfig.Endpoint{URL: deployed, NeedsKey: true, Auth: hostconfig.AuthKey}, refusal: "claude.ai sends no API key"},
		{host: "chatgpt", ep: hostconfig.Endpoint{URL: deployed, Auth: hostconfig.AuthKey}, refusal: "ChatGPT sends no API key"},
		{host: "claude-ai", ep: hostconfig.Endpoint{URL: "http://127.0.0.1:8080/mcp", NeedsKey: true}, refusal: "needs the server's public https URL"},
		{host: "chatgpt", ep: hostconfig.Endpoint{URL: "http://192.168.1.20:8080/mcp"}, refusal: "needs the server's public https URL"},
		{host: "emacs", ep: hostconfig.Endpoint{URL: deployed}, refusal: `unknown host "emacs"`},
	}
	for _, tc := range cases {
		name := tc.host + " " + tc.ep.URL + " " + string(tc.ep.Auth)
		snippets, err := hostconfig.Render(tc.host, tc.ep)
		if tc.refusal != "" {
			if err == nil || !strings.Contains(err.Error(), tc.refusal) {
				t.Errorf("%s: got %v, want a refusal saying %q", name, err, tc.refusal)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var all strings.Builder
		for _, s := range snippets {
			all.WriteString(s.Text + "\n")
		}
		if got := strings.Contains(all.String(), "Authorization"); got != tc.header {
			t.Errorf("%s: Authorization present=%v, want %v\n%s", name, got, tc.header, all.String())
		}
		if got := hostconfig.SignIn(tc.host, tc.ep) != ""; got != tc.signIn {
			t.Errorf("%s: sign-in steps %v, want %v", name, got, tc.signIn)
		}
		if !strings.Contains(all.String(), tc.text) || !strings.Contains(all.String(), tc.ep.URL) {
			t.Errorf("%s: the rendering lacks %q or the URL:\n%s", name, tc.text, all.String())
		}
	}
}

// A host's sign-in steps name the server as configured.
func TestSignInNamesTheServer(t *testing.T) {
	ep := hostconfig.Endpoint{URL: "http://127.0.0.1:8080/mcp", NeedsKey: true, Auth: hostconfig.AuthOAuth, Name: "asks"}
	if got := hostconfig.SignIn(hostconfig.ClaudeCode, ep); !strings.Contains(got, "claude mcp login asks") {
		t.Errorf("Claude Code's sign-in: %q", got)
	}
}

func TestParseAuth(t *testing.T) {
	for in, want := range map[string]hostconfig.Auth{"": "", "key": hostconfig.AuthKey, "oauth": hostconfig.AuthOAuth} {
		if got, err := hostconfig.ParseAuth(in); err != nil || got != want {
			t.Errorf("ParseAuth(%q) = %q, %v", in, got, err)
		}
	}
	for _, in := range []string{"none", "OAuth", "bearer"} {
		if _, err := hostconfig.ParseAuth(in); err == nil || !strings.Contains(err.Error(), "key (an API key") {
			t.Errorf("ParseAuth(%q): %v", in, err)
		}
	}
}
