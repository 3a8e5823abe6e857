package mcptools

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/mcptasks"
)

// installTasks offers MCP Tasks (internal/mcptasks) on the server: the
// creating tools may run as tasks, whose results come from elicit_await and
// elicit_result through the server's own tools/call path.
func (s *Server) installTasks() {
	_, err := mcptasks.Install(s.mcp, mcptasks.Options{
		Service:     s.svc,
		TaskTools:   []string{ToolApproval, ToolSelection},
		AwaitTool:   ToolAwait,
		ResultTool:  ToolResult,
		Principal:   principalOf,
		ReviewLink:  s.keptLink,
		Hold:        s.waits.take,
		SessionDone: s.sessions.Done,
		Logger:      s.log,
	})
	if err != nil {
		// Only a method name clash with the SDK's own can fail: a bug.
		panic("mcptools: installing tasks: " + err.Error())
	}
}

// keptLink opens the review link kept (sealed) with a request for its
// owner, with the request's message; "" when none is kept or it is not
// readable.
func (s *Server) keptLink(ctx context.Context, principal, id string) (link, message string) {
	if s.sealer == nil {
		return "", ""
	}
	_, sealed, message, err := s.svc.PushLink(ctx, principal, id)
	if err != nil || sealed == "" {
		return "", ""
	}
	b, err := s.sealer.Open(linkPurpose(id), sealed)
	if err != nil {
		return "", ""
	}
	return string(b), message
}

// principalOf is the authenticated agent identity of a request: the user
// id the bearer-token middleware recorded, else elicitation.Anonymous.
func principalOf(extra *mcp.RequestExtra) string {
	if extra != nil && extra.TokenInfo != nil && extra.TokenInfo.UserID != "" {
		return extra.TokenInfo.UserID
	}
	return anonymous
}
