package gate_test

import (
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/proxy/gate"
)

// BenchmarkEmbeddedService: one review request created and awaited
// (1 ms) through the embedded service, called in process as the gate calls
// it, and over MCP on a loopback listener, as it called it before and as it
// calls a service reached by elicitation_service.url.
func BenchmarkEmbeddedService(b *testing.B) {
	l := Start(b)
	for _, name := range []string{"in process", "over MCP"} {
		var svc gate.Service = l.Embedded.Service(elicitation.Client{Name: "bench"})
		if name == "over MCP" {
			svc = gate.NewMCPService(l.MCPURL, "", &mcp.Implementation{Name: "bench", Version: "1"})
		}
		b.Run(name, func(b *testing.B) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			for b.Loop() {
				t, err := svc.Approval(ctx, gate.ApprovalRequest{Message: "Go ahead?", Context: map[string]any{"path": "/tmp/x"}, TimeoutSeconds: 600})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := svc.Await(ctx, t.ID, time.Millisecond); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
