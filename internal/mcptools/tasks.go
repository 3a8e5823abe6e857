package mcptools

import (
	"context"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/mcptasks"
)

// installTasks offers MCP Tasks (internal/mcptasks) on the server: the
// creating tools may run as tasks, which wait as elicit_await does and
// whose results are elicit_result's, from the same code.
func (s *Server) installTasks() {
	_, err := mcptasks.Install(s.mcp, mcptasks.Options{
		Service:     s.svc,
		TaskTools:   []string{ToolApproval, ToolSelection},
		Await:       s.taskAwait,
		Result:      s.taskResult,
		ResultTool:  ToolResult,
		Principal:   principalOf,
		ReviewLink:  s.keptLink,
		Hold:        s.waits.take,
		Watch:       s.watches.hold,
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

// taskAwait waits for a task's request as elicit_await does for req,
// within the server's full bound.
func (s *Server) taskAwait(ctx context.Context, req *mcp.CallToolRequest, id string) (elicitation.Status, error) {
	ctx, done := bind(withAuditNote(ctx, req), s.httpRequest(req))
	defer done()
	res, st, err := s.awaitID(ctx, req, id, 0)
	if err == nil && res != nil {
		return elicitation.StatusPending, nil // an input request: not for a task's wait
	}
	return st.Status, err
}

// taskOutput is a task's result: elicit_result's, with the request's id
// and the review link kept with it (null when none is).
type taskOutput struct {
	resultOutput
	ElicitationID string  `json:"elicitationId"`
	ReviewURL     *string `json:"reviewUrl"`
}

// taskResult is a task's result as elicit_result answers req; an error
// only for a request not found.
func (s *Server) taskResult(ctx context.Context, req *mcp.CallToolRequest, id string) (*mcp.CallToolResult, error) {
	ctx = withAuditNote(ctx, req)
	p := principal(req)
	out, err := s.resultOf(ctx, p, id)
	if elicitation.CodeOf(err) == elicitation.CodeNotFound {
		return nil, err
	}
	var task *taskOutput
	if err == nil {
		task = &taskOutput{resultOutput: out, ElicitationID: id}
		if link, _ := s.keptLink(ctx, p, id); link != "" {
			task.ReviewURL = &link
		}
	}
	return s.toolResult(ctx, ToolResult, p, task, err), nil
}
