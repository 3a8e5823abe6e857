package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/mcp-elicitation/elicitation/internal/hostconfig/hostconfigtest"
)

const deployedMCP = "https://a1b2c3d4e5.execute-api.eu-west-1.amazonaws.com/mcp"

// TestConnectAuth: "connect --auth oauth" renders each host's
// configuration without a static Authorization header and says how the
// person signs in; "--auth key" (and no --auth) is what connect always
// printed.
func TestConnectAuth(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args      []string
		host      string
		header    bool     // stdout carries the Authorization header
		stderr    []string // stderr says these
		notStderr string   // and not this
	}{
		{args: []string{"--url", deployedMCP, "--auth", "oauth", "claude-code"}, host: "claude-code",
			stderr: []string{"claude mcp add --transport http elicitation " + deployedMCP + "\n", "# OAuth: no API key in the configuration", "claude mcp login elicitation", "consent page"}, notStderr: "keys create"},
		{args: []string{"--url", deployedMCP, "--auth", "oauth", "--name", "asks", "vscode"}, host: "vscode",
			stderr: []string{"code --add-mcp", "VS Code asks to authenticate"}},
		{args: []string{"--url", deployedMCP, "--auth=oauth", "cursor"}, host: "cursor", stderr: []string{"needing login"}},
		{args: []string{"--url", deployedMCP, "--auth", "oauth", "claude-desktop"}, host: "claude-desktop", stderr: []string{"mcp-remote opens the browser"}},
		{args: []string{"--url", deployedMCP, "--auth", "oauth", "goose"}, host: "goose", stderr: []string{"goose session --with-streamable-http-extension " + deployedMCP}},
		{args: []string{"--require-api-key", "--auth", "oauth", "claude-code"}, host: "claude-code", stderr: []string{"--oidc-issuer"}},
		{args: []string{"--url", deployedMCP, "--auth", "key", "cursor"}, host: "cursor", header: true, stderr: []string{"Cursor reads it from $ELICITATION_API_KEY"}, notStderr: "OAuth"},
		{args: []string{"--url", deployedMCP, "cursor"}, host: "cursor", header: true, stderr: []string{"keys create --principal NAME"}, notStderr: "OAuth"},
		{args: []string{"--auth", "key", "vscode"}, host: "vscode", stderr: []string{"code --add-mcp"}, notStderr: "API key"},
		// The server's own settings with OAuth on: the hosts sign in by default.
		{args: []string{"--url", deployedMCP, "--oauth", "--oidc-issuer", "https://id.example.com", "--oidc-client-id", "c", "cursor"}, host: "cursor", stderr: []string{"# OAuth: no API key in the configuration"}},
	} {
		var stdout, stderr bytes.Buffer
		if err := run(context.Background(), append([]string{"connect"}, tc.args...), &stdout, &stderr, noEnv); err != nil {
			t.Fatalf("connect %v: %v\n%s", tc.args, err, stderr.String())
		}
		if got := strings.Contains(stdout.String(), "Authorization"); got != tc.header {
			t.Errorf("connect %v: Authorization present=%v, want %v\n%s", tc.args, got, tc.header, stdout.String())
		}
		for _, w := range tc.stderr {
			if !strings.Contains(stderr.String(), w) {
				t.Errorf("connect %v: stderr lacks %q:\n%s", tc.args, w, stderr.String())
			}
		}
		if tc.notStderr != "" && strings.Contains(stderr.String(), tc.notStderr) {
			t.Errorf("connect %v: stderr says %q:\n%s", tc.args, tc.notStderr, stderr.String())
		}
		doc, err := parseSnippet(stdout.String())
		if err != nil {
			t.Fatalf("connect %v: stdout is not one configuration: %v\n%s", tc.args, err, stdout.String())
		}
		if err := hostconfigtest.Validate(tc.host, doc); err != nil {
			t.Errorf("connect %v: %v", tc.args, err)
		}
	}
}

// TestConnectConnectors: claude.ai and ChatGPT have no configuration
// file: stdout is the URL to paste, stderr the steps; the URL is --url,
// else --public-url's /mcp; an API key or a URL they cannot reach is
// refused with what to do instead.
func TestConnectConnectors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args   []string
		env    map[string]string
		url    string   // stdout
		stderr []string // stderr says these
	}{
		{args: []string{"--url", deployedMCP, "claude-ai"}, url: deployedMCP,
			stderr: []string{"# claude.ai has no configuration file: paste the URL above as the Remote MCP server URL of a connector.", "Add custom connector", "then Connect", "names the client (Claude), where it returns (claude.ai)", "from Anthropic's servers"}},
		{args: []string{"--url", deployedMCP, "--auth", "oauth", "chatgpt"}, url: deployedMCP,
			stderr: []string{"Developer mode", "Authentication: OAuth", "names the client (ChatGPT)", "from OpenAI's servers"}},
		{args: []string{"--require-api-key=false", "chatgpt"}, env: map[string]string{"ELICITATION_PUBLIC_URL": "https://tunnel.example/"}, url: "https://tunnel.example/mcp",
			stderr: []string{"Authentication: No authentication", "takes anyone who has the URL"}},
		{args: []string{"--public-url", "https://review.example.com", "--require-api-key", "claude-ai"}, url: "https://review.example.com/mcp",
			stderr: []string{"sign-in (the reviewers' OpenID Connect issuer, --oidc-issuer)"}},
	} {
		var stdout, stderr bytes.Buffer
		getenv := func(k string) string { return tc.env[k] }
		if err := run(context.Background(), append([]string{"connect"}, tc.args...), &stdout, &stderr, getenv); err != nil {
			t.Fatalf("connect %v: %v\n%s", tc.args, err, stderr.String())
		}
		if stdout.String() != tc.url+"\n" {
			t.Errorf("connect %v: stdout %q, want the URL %s", tc.args, stdout.String(), tc.url)
		}
		for _, w := range tc.stderr {
			if !strings.Contains(stderr.String(), w) {
				t.Errorf("connect %v: stderr lacks %q:\n%s", tc.args, w, stderr.String())
			}
		}
	}
}

func TestConnectRefuses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--url", deployedMCP, "--auth", "key", "claude-ai"}, "claude.ai sends no API key (it takes OAuth or no auth at all, docs/hosts.md): use --auth oauth"},
		{[]string{"--url", deployedMCP, "--auth", "key", "chatgpt"}, "ChatGPT sends no API key"},
		{[]string{"claude-ai"}, "claude.ai reaches a server from its vendor's servers, never from your machine: it needs the server's public https URL"},
		{[]string{"--url", "http://192.168.1.20:8080/mcp", "chatgpt"}, "not http://192.168.1.20:8080/mcp"},
		{[]string{"--auth", "bearer", "cursor"}, `--auth: auth "bearer": key (an API key in a static Authorization header) or oauth`},
	} {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), append([]string{"connect"}, tc.args...), &stdout, &stderr, noEnv)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("connect %v: got %v, want an error saying %q", tc.args, err, tc.want)
		}
		if stdout.Len() != 0 {
			t.Errorf("connect %v: a refusal printed %q", tc.args, stdout.String())
		}
	}
}

// "connect all" adds the connectors where the URL is one they reach.
func TestConnectAllConnectors(t *testing.T) {
	t.Parallel()
	for url, want := range map[string]bool{deployedMCP: true, "http://127.0.0.1:8080/mcp": false} {
		var stdout bytes.Buffer
		if err := run(context.Background(), []string{"connect", "--url", url, "all"}, &stdout, &bytes.Buffer{}, noEnv); err != nil {
			t.Fatal(err)
		}
		for _, title := range []string{"# claude.ai: Remote MCP server URL\n", "# ChatGPT: steps\n"} {
			if got := strings.Contains(stdout.String(), title); got != want {
				t.Errorf("connect --url %s all: %q present=%v, want %v", url, title, got, want)
			}
		}
	}
}

// The usage names the connectors and says what goes where for them.
func TestConnectUsageNamesConnectors(t *testing.T) {
	t.Parallel()
	var stderr bytes.Buffer
	if err := run(context.Background(), []string{"connect"}, &bytes.Buffer{}, &stderr, noEnv); err == nil {
		t.Fatal("connect without a HOST: no error")
	}
	for _, want := range []string{", chatgpt, claude-ai, or all.\n", "claude-ai and chatgpt have no configuration file: the URL to paste goes to stdout, the steps to stderr.", "-auth string"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("usage lacks %q:\n%s", want, stderr.String())
		}
	}
}
