package proxy_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/proxy"
	"github.com/mcp-elicitation/elicitation/internal/proxy/config"
)

// A proxy in front of an upstream whose greet tool requires a name: the
// client calls greet without one, the proxy asks the user for it in the
// client's form, and forwards the completed call once.
func Example() {
	// The upstream: any MCP server; here one on streamable HTTP.
	upstream := mcp.NewServer(&mcp.Implementation{Name: "greeter", Version: "1"}, nil)
	type greet struct {
		Name string `json:"name"`
	}
	mcp.AddTool(upstream, &mcp.Tool{Name: "greet", Description: "Greets someone"}, func(_ context.Context, _ *mcp.CallToolRequest, in greet) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "Hello, " + in.Name + "!"}}}, nil, nil
	})
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return upstream }, nil))
	defer srv.Close()

	// The proxy, from the configuration the YAML file would hold.
	cfg, err := config.ParseWith(fmt.Appendf(nil, "upstream:\n  url: %q\ntools:\n  greet:\n    required: [name]\n", srv.URL), config.Options{})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	p, err := proxy.New(ctx, proxy.Options{Config: cfg})
	if err != nil {
		log.Fatal(err)
	}
	defer p.Close()

	// A client that shows forms (its user types "Ada"), connected in
	// memory; Server().Run(ctx, &mcp.StdioTransport{}) serves stdio, and
	// HTTPHandler streamable HTTP.
	client := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			fmt.Println("asked:", req.Params.Message)
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
		},
	})
	ct, st := mcp.NewInMemoryTransports()
	ss, err := p.Server().Connect(ctx, st, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer ss.Close()
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "greet", Arguments: map[string]any{}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	// Output:
	// asked: The tool greet needs more information: name.
	// Hello, Ada!
}
