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
				if got := strings.Contains(s.Text, "Authorization"); got != ep.NeedsKey {
					t.Errorf("%s %s: Authorization present=%v, want %v\n%s", h.Name, epName, got, ep.NeedsKey, s.Text)
				}
			}
		}
	}
}

// TestRenderGolden keeps the exact text (what docs/hosts.md shows) under
// review: go test ./internal/hostconfig/ -update rewrites it.
func TestRenderGolden(t *testing.T) {
	for _, epName := range []string{"local", "deployed", "lan", "ipv6"} {
		var b strings.Builder
		for _, h := range hostconfig.Hosts() {
			snippets, _ := hostconfig.Render(h.Name, endpoints[epName])
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
// API keys.
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
		for _, h := range hostconfig.Hosts() {
			if !shown[epName](h.Name) {
				continue
			}
			snippets, _ := hostconfig.Render(h.Name, endpoints[epName])
			for _, s := range snippets {
				if s.Lang == "text" {
					continue // described in prose
				}
				if !strings.Contains(string(doc), "\n"+s.Text+"\n```") {
					t.Errorf("docs/hosts.md does not show the %s %s configuration (%s) as rendered:\n%s", epName, h.Title, s.Where, s.Text)
				}
			}
		}
	}
}
