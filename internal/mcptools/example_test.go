package mcptools_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/boltstore"
	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/mcptools"
)

// An agent asks a human to approve a deployment, a reviewer approves it
// on the review page (here: Service.Submit, which the page calls), and the
// agent's elicit_await and elicit_result bring the decision back.
func ExampleNew() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "mcptools-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	store, err := boltstore.Open(filepath.Join(dir, "store.db"))
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	svc := elicitation.NewService(elicitation.Config{Store: store})

	// The server's MCP endpoint, on any http.Handler mux.
	keys := map[string]string{} // elicitation id -> review key, as the review URL carries it
	srv := mcptools.New(mcptools.Options{
		Service: svc,
		ReviewURL: func(r *http.Request, id, key string) string {
			keys[id] = key
			return "http://" + r.Host + "/review/" + id + "/" + key
		},
	})
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()

	// The agent's side: any MCP client.
	client := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: hs.URL, DisableStandaloneSSE: true}, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()
	call := func(name string, args map[string]any) map[string]any {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil || res.IsError {
			log.Fatal(name, err, res)
		}
		return res.StructuredContent.(map[string]any)
	}
	created := call(mcptools.ToolApproval, map[string]any{"message": "Deploy v2 to production?", "context": map[string]any{"version": "2.0"}})
	id := created["elicitationId"].(string)
	fmt.Println("created:", created["status"])

	// The reviewer approves on the review page.
	if _, err := svc.Submit(ctx, id, keys[id], elicitation.Submission{ID: "s1", Decision: elicitation.DecisionSubmitted}); err != nil {
		log.Fatal(err)
	}
	fmt.Println("awaited:", call(mcptools.ToolAwait, map[string]any{"elicitationId": id})["status"])
	fmt.Println("decision:", call(mcptools.ToolResult, map[string]any{"elicitationId": id})["decision"])
	// Output:
	// created: pending
	// awaited: submitted
	// decision: submitted
}
