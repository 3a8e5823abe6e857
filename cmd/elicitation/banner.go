package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/mcp-elicitation/elicitation/internal/hostconfig"
)

// PrintWelcome tells the user how to connect an MCP host: ready-to-paste
// configuration for the common hosts (with the Authorization header when
// API keys are required) and who may do what on this endpoint.
func (m *Main) PrintWelcome(w io.Writer) {
	ep := hostconfig.Endpoint{URL: m.MCPURL, NeedsKey: m.Config.RequireAPIKey}
	fmt.Fprintf(w, "\nelicitation %s is running (store: %s)\n\n", version, m.storeName())
	fmt.Fprintf(w, "  MCP endpoint (streamable HTTP):  %s\n", m.MCPURL)
	fmt.Fprintf(w, "  Review pages:                    %s/review/…\n\n", m.ReviewBase)
	if ep.NeedsKey {
		fmt.Fprintf(w, `API keys are required: every MCP request must carry "Authorization: Bearer <key>".
Create a key with "elicitation keys create --principal NAME" (printed once) and put it
where your host reads it (below: $%s). Each key's principal sees only its own requests.

`, hostconfig.KeyVariable)
	} else {
		fmt.Fprint(w, `No API keys: any program that can reach this endpoint may create requests, and read,
wait on or cancel any request whose id it knows (ids are in tool results and in this log).
Use --require-api-key when others share this machine or the address is reachable from elsewhere.

`)
	}
	fmt.Fprint(w, "Connect a host (\"elicitation connect HOST\" prints one; docs/hosts.md explains each):\n\n")
	for _, host := range []string{hostconfig.ClaudeCode, hostconfig.Cursor, hostconfig.VSCode} {
		snippets, err := hostconfig.Render(host, ep)
		if err != nil {
			continue
		}
		for _, s := range snippets {
			if s.Lang == "sh" && host != hostconfig.ClaudeCode {
				continue // one form per host is enough here
			}
			fmt.Fprintf(w, "  %s, %s:\n%s\n\n", s.Host.Title, s.Where, indentLines(s.Text, "    "))
			if host == hostconfig.ClaudeCode {
				break // its command, not also its file
			}
		}
	}
	fmt.Fprint(w, "  Claude Desktop (through mcp-remote), Goose, the MCP Inspector:\n")
	fmt.Fprint(w, "    elicitation connect claude-desktop | goose | inspector\n\n")
	fmt.Fprint(w, "Review URLs are logged here as requests are created. Stop with Ctrl-C.\n\n")
}

func indentLines(s, prefix string) string {
	return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix)
}

func (m *Main) storeName() string {
	if m.Config.Store == "dynamodb" {
		return "DynamoDB table " + m.Config.Table
	}
	return "embedded, " + filepath.Join(m.Config.DataDir, "elicitation.db")
}
