package main

import (
	"context"
	"fmt"
	"github.com/mcp-elicitation/elicitation/internal/percentile"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkStdioEchoOverhead measures what the proxy adds to a stdio tool
// call (SPEC §7: at most 0.3 ms at p50). In one run it takes turns calling
// echo on three instances of the reference server: directly, through the
// proxy binary, and through a plain byte relay process (the cost of any
// extra process in the path, as a floor). It reports the p50 latencies
// and what the proxy and the relay add to the direct call.
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
	pc := exec.Command(binary, "--config", cfg, "--log-level", "error")
	proxied := connect(pc)
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	relayCmd := exec.Command(self, node, script)
	relayCmd.Env = append(os.Environ(), relayEnv+"=1")
	relayed := connect(relayCmd)

	call := func(cs *mcp.ClientSession) time.Duration {
		start := time.Now()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "benchmark"}})
		d := time.Since(start)
		if err != nil || res.IsError {
			b.Fatalf("echo: %v %v", res, err)
		}
		return d
	}
	sessions := []*mcp.ClientSession{direct, proxied, relayed}
	times := make([][]time.Duration, len(sessions))
	for range 200 { // warm up every path
		for _, cs := range sessions {
			call(cs)
		}
	}
	cpuBefore := cpuTime(b, pc.Process.Pid)
	b.ResetTimer()
	for i := range b.N {
		for j := range sessions {
			k := (i + j) % len(sessions) // rotate the order
			times[k] = append(times[k], call(sessions[k]))
		}
	}
	b.StopTimer()
	b.ReportMetric(us(cpuTime(b, pc.Process.Pid)-cpuBefore)/float64(b.N), "proxy-cpu-µs/call")
	dp50, _ := percentiles(times[0])
	pp50, pp99 := percentiles(times[1])
	rp50, _ := percentiles(times[2])
	b.ReportMetric(us(dp50), "direct-p50-µs")
	b.ReportMetric(us(pp50), "proxy-p50-µs")
	b.ReportMetric(us(pp50-dp50), "proxy-added-p50-µs")
	b.ReportMetric(us(rp50-dp50), "relay-added-p50-µs")
	b.ReportMetric(us(pp99), "proxy-p99-µs")
}

// relayEnv makes the test binary a plain stdio relay: it starts the
// command in its arguments and copies bytes both ways.
const relayEnv = "MCP_ELICITATION_PROXY_BENCH_RELAY"

func relay(args []string) int {
	cmd := exec.Command(args[0], args[1:]...)
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	go func() {
		io.Copy(in, os.Stdin)
		in.Close()
	}()
	io.Copy(os.Stdout, out)
	cmd.Wait()
	return 0
}

func percentiles(ds []time.Duration) (p50, p99 time.Duration) {
	return percentile.Of(ds, 50), percentile.Of(ds, 99)
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// cpuTime is the user and system CPU time a process has used so far
// (Linux; the tree's children are not included).
func cpuTime(b *testing.B, pid int) time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatalf("reading the proxy's CPU time: %v", err)
	}
	s := string(data)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	utime, _ := strconv.ParseInt(fields[11], 10, 64)
	stime, _ := strconv.ParseInt(fields[12], 10, 64)
	return time.Duration(utime+stime) * time.Second / 100 // USER_HZ
}
