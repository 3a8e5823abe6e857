package main

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// bareHandler is the anchor for CPU per call: a go-sdk server with one
// tool, echo, that returns its message, behind the SDK's own streamable
// HTTP handler with the options mcptools uses for the same mode
// (stateless: no session, JSON responses), on the same http.Server as
// ours. What ours costs beyond it is our handler, the store and our wiring.
func bareHandler(stateless bool) http.Handler {
	srv := mcp.NewServer(&mcp.Implementation{Name: "bare-go-sdk", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{
		Name:        "echo",
		Description: "Returns its message.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}`),
	}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var in struct {
			Message string `json:"message"`
		}
		if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
			return nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Message}}}, nil
	})
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: stateless, JSONResponse: stateless})
}
