// Package hostconfig knows how each MCP host (Claude Code, Claude
// Desktop, Cursor, VS Code, Goose, the MCP Inspector) is told about an MCP
// server: the file, the keys, the transport and the Authorization header.
// It renders ready-to-paste configuration for an endpoint (the start-up
// banner and "elicitation connect HOST" print it); hostconfigtest
// validates configuration against each host's documented shape (the tests
// and the docs test use it). docs/hosts.md cites the documentation behind
// every shape.
package hostconfig

import "sort"

// Host names, as "elicitation connect HOST" takes them.
const (
	ClaudeCode    = "claude-code"
	ClaudeDesktop = "claude-desktop"
	Cursor        = "cursor"
	VSCode        = "vscode"
	Goose         = "goose"
	Inspector     = "inspector"
)

// Host describes one host.
type Host struct {
	Name  string // as above
	Title string // for people
}

var hosts = []Host{
	{ClaudeCode, "Claude Code"},
	{ClaudeDesktop, "Claude Desktop"},
	{Cursor, "Cursor"},
	{VSCode, "VS Code"},
	{Goose, "Goose"},
	{Inspector, "MCP Inspector"},
}

var byName = func() map[string]Host {
	m := map[string]Host{}
	for _, h := range hosts {
		m[h.Name] = h
	}
	return m
}()

// Names lists the host names in a stable order.
func Names() []string {
	names := make([]string, 0, len(hosts))
	for _, h := range hosts {
		names = append(names, h.Name)
	}
	sort.Strings(names)
	return names
}
