// Package hostconfig knows how each MCP host (Claude Code, Claude
// Desktop, Cursor, VS Code, Goose, the MCP Inspector, and the connectors
// of claude.ai and ChatGPT) is told about an MCP server: the file, the
// keys, the transport, and how it authenticates (a static Authorization
// header, or the MCP authorization flow the host runs itself). It renders
// ready-to-paste configuration for an endpoint (the start-up banner and
// "elicitation connect HOST" print it); hostconfigtest validates
// configuration against each host's documented shape (the tests and the
// docs test use it). docs/hosts.md cites the documentation behind every
// shape.
package hostconfig

import (
	"fmt"
	"sort"
	"strings"
)

// Host names, as "elicitation connect HOST" takes them.
const (
	ClaudeCode    = "claude-code"
	ClaudeDesktop = "claude-desktop"
	Cursor        = "cursor"
	VSCode        = "vscode"
	Goose         = "goose"
	Inspector     = "inspector"
	// ClaudeAI is a custom connector of claude.ai, which Claude Desktop
	// and the Claude mobile apps share.
	ClaudeAI = "claude-ai"
	// ChatGPT is a connector (an app in developer mode) of ChatGPT.
	ChatGPT = "chatgpt"
)

// Host describes one host.
type Host struct {
	Name  string // as above
	Title string // for people
	// Key: the host sends a static "Authorization: Bearer <API key>".
	Key bool
	// OAuth: the host runs the MCP authorization flow itself (discovery
	// from the 401, registration, the person's sign-in in a browser) and
	// sends the token it gets.
	OAuth bool
	// Connector: the host has no configuration file; a person pastes the
	// URL into its settings, and it reaches the server from its vendor's
	// servers, so only a public https URL works.
	Connector bool
	// SignIn says what the person does to sign in when the host uses
	// OAuth, as the host's documentation has it (docs/hosts.md).
	SignIn string
}

var hosts = []Host{
	{Name: ClaudeCode, Title: "Claude Code", Key: true, OAuth: true,
		SignIn: "run claude mcp login NAME (or /mcp in a session, then the server): Claude Code opens the browser"},
	{Name: ClaudeDesktop, Title: "Claude Desktop", Key: true, OAuth: true,
		SignIn: "mcp-remote opens the browser when Claude Desktop starts it, and keeps the tokens in ~/.mcp-auth"},
	{Name: Cursor, Title: "Cursor", Key: true, OAuth: true,
		SignIn: "Cursor Settings → MCP shows the server as needing login: click Connect, and Cursor opens the browser"},
	{Name: VSCode, Title: "VS Code", Key: true, OAuth: true,
		SignIn: "VS Code asks to authenticate when it starts the server: Allow, and it opens the browser"},
	{Name: Goose, Title: "Goose", Key: true, OAuth: true,
		SignIn: "Goose opens the browser when the extension first connects, and keeps the tokens in the system keychain"},
	{Name: Inspector, Title: "MCP Inspector", Key: true, OAuth: true,
		SignIn: "the CLI and the web UI open the browser when the server asks for a token (the CLI's callback: http://127.0.0.1:6276/oauth/callback)"},
}

// connectors are the hosts a person adds by pasting the URL into the
// host's settings (Connectors), in the order docs/hosts.md presents them.
var connectors = []Host{
	{Name: ClaudeAI, Title: "claude.ai", OAuth: true, Connector: true,
		SignIn: "Claude sends you to the server's sign-in when you Connect the connector"},
	{Name: ChatGPT, Title: "ChatGPT", OAuth: true, Connector: true,
		SignIn: "ChatGPT sends you to the server's sign-in when you create the connector"},
}

var byName = func() map[string]Host {
	m := map[string]Host{}
	for _, h := range append(Hosts(), connectors...) {
		m[h.Name] = h
	}
	return m
}()

// Names lists the host names in a stable order: the hosts with a
// configuration, then the connectors.
func Names() []string {
	var names []string
	for _, group := range [][]Host{hosts, connectors} {
		var g []string
		for _, h := range group {
			g = append(g, h.Name)
		}
		sort.Strings(g)
		names = append(names, g...)
	}
	return names
}

// Lookup returns the host named name.
func Lookup(name string) (Host, error) {
	h, ok := byName[name]
	if !ok {
		return Host{}, fmt.Errorf("unknown host %q (one of %s)", name, strings.Join(Names(), ", "))
	}
	return h, nil
}

// Connectors returns the hosts without a configuration file (claude.ai,
// ChatGPT), which "elicitation connect HOST" tells how to add.
func Connectors() []Host { return append([]Host(nil), connectors...) }
