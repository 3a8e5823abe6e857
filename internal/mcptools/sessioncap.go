package mcptools

import (
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// CapSessions returns the session cap of the tools' own endpoint
// (sessions.go), with the limits of o (SessionIdle, MaxSessions and the
// other session fields; the rest of o is not read), for another MCP
// server's session handler: the proxy's --http listener gets the same cap
// from the same code. Wrap only a handler that keeps sessions.
func CapSessions(o Options) func(srv *mcp.Server, sessions http.Handler) http.Handler {
	caps := sessionLimits(o)
	return func(srv *mcp.Server, sessions http.Handler) http.Handler { return caps.capSessions(srv, sessions) }
}
