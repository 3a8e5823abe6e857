package main

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkStdioEchoOverhead measures what the proxy adds to a stdio tool
// call (SPEC §7: at most 0.3 ms at p50). In one run it alternates an echo
// call made directly to the reference server with one made through the
// proxy binary in front of another instance of the same server, and
// reports both p50 latencies and their difference.
//
//	go test -run '^$' -bench StdioEchoOverhead -benchtime 2000x ./cmd/mcp-elicitation-proxy/
func BenchmarkStdioEchoOverhead(b *testing.B) {
	script := nodeModule(b, "mcp-server-everything")
	node, _ := exec.LookPath("node")
	root := repoRoot(b)
	ctx := context.Background()

	connect := func(cmd *exec.Cmd) *mcp.ClientSession {
		cmd.Dir = root
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { cs.Close() })
		return cs
	}
	direct := connect(exec.Command(node, script))
	cfg := writeConfig(b, fmt.Sprintf("upstream:\n  command: %q\n  args: [%q]\n", node, script))
	proxied := connect(exec.Command(binary, "--config", cfg, "--log-level", "error"))
	if _, err := filepath.Abs(cfg); err != nil {
		b.Fatal(err)
	}

	call := func(cs *mcp.ClientSession) time.Duration {
		start := time.Now()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "benchmark"}})
		d := time.Since(start)
		if err != nil || res.IsError {
			b.Fatalf("echo: %v %v", res, err)
		}
		return d
	}
	for range 200 { // warm up both paths
		call(direct)
		call(proxied)
	}
	directTimes := make([]time.Duration, 0, b.N)
	proxyTimes := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		if i%2 == 0 {
			directTimes = append(directTimes, call(direct))
			proxyTimes = append(proxyTimes, call(proxied))
		} else {
			proxyTimes = append(proxyTimes, call(proxied))
			directTimes = append(directTimes, call(direct))
		}
	}
	b.StopTimer()
	dp50, dp99 := percentiles(directTimes)
	pp50, pp99 := percentiles(proxyTimes)
	b.ReportMetric(us(dp50), "direct-p50-µs")
	b.ReportMetric(us(pp50), "proxy-p50-µs")
	b.ReportMetric(us(pp50-dp50), "added-p50-µs")
	b.ReportMetric(us(dp99), "direct-p99-µs")
	b.ReportMetric(us(pp99), "proxy-p99-µs")
}

func percentiles(ds []time.Duration) (p50, p99 time.Duration) {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2], s[len(s)*99/100]
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
