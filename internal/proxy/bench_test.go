package proxy_test

import (
	"context"
	"fmt"
	"os/exec"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkInProcessEcho measures an echo call through a proxy running in
// the benchmark's process (client on an in-memory transport, reference
// server on stdio) beside the direct call, to profile the proxy's own work:
//
//	go test -run '^$' -bench InProcessEcho -cpuprofile cpu.out ./internal/proxy/
func BenchmarkInProcessEcho(b *testing.B) {
	node, script := everything(b)
	ctx := context.Background()
	p := startProxy(b, fmt.Sprintf("upstream:\n  command: %q\n  args: [%q]\n", node, script))
	cs := connect(b, p, downstreams[0], nil, nil)
	direct, err := mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil).Connect(ctx, &mcp.CommandTransport{Command: exec.Command(node, script)}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer direct.Close()
	for _, tt := range []struct {
		name string
		cs   *mcp.ClientSession
	}{{"direct", direct}, {"proxy", cs}} {
		b.Run(tt.name, func(b *testing.B) {
			for b.Loop() {
				res, err := tt.cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "benchmark"}})
				if err != nil || res.IsError {
					b.Fatal(res, err)
				}
			}
		})
	}
}
