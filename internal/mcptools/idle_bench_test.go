package mcptools_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/mcptools"
)

// BenchmarkIdlePushes measures what pending requests cost while nobody
// decides them, when each was pushed to a URL-capable session (which then
// waits to send notifications/elicitation/complete): it creates 3,000
// requests on one 2025-11-25 session whose host accepts every push, waits
// until every push reached the host, and then measures an idle window of
// 10 s: CPU time of the whole process per second of idle (cpu-ms/s),
// the heap in use after a GC (heap-MB), the resident set (rss-MB) and the
// goroutines, with the host and the test in the same process; pending=0
// is the baseline, push=false the same requests with the push off (so no
// watch). Run it with
//
//	go test ./internal/mcptools -run '^$' -bench IdlePushes -benchtime 1x
func BenchmarkIdlePushes(b *testing.B) {
	for _, c := range []struct {
		pending int
		push    bool
	}{{0, true}, {3000, true}, {3000, false}} {
		b.Run(fmt.Sprintf("pending=%d/push=%v", c.pending, c.push), func(b *testing.B) { idlePushes(b, c.pending, c.push) })
	}
}

func idlePushes(b *testing.B, pending int, push bool) {
	const idle = 10 * time.Second
	for range b.N {
		e := newEnv(b, envOptions{push: push, sessionIdle: -1})
		var pushed atomic.Int64
		client := mcp.NewClient(&mcp.Implementation{Name: "idle-host", Version: "1"}, &mcp.ClientOptions{
			Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}},
			ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				pushed.Add(1)
				return &mcp.ElicitResult{Action: "accept"}, nil
			},
		})
		tr := &mcp.StreamableClientTransport{Endpoint: e.servers[0].URL + "/mcp", HTTPClient: &http.Client{Transport: roundTrip{e: e}}, MaxRetries: -1}
		cs, err := client.Connect(context.Background(), tr, &mcp.ClientSessionOptions{ProtocolVersion: proto20251125})
		if err != nil {
			b.Fatal(err)
		}
		for range pending {
			ok(b, cs, mcptools.ToolApproval, map[string]any{"message": "idle", "context": 1, "timeoutSeconds": 3600})
		}
		for deadline := time.Now().Add(time.Minute); push && pushed.Load() < int64(pending); time.Sleep(50 * time.Millisecond) { // polling a count the client's handler raises
			if time.Now().After(deadline) {
				b.Fatalf("%d of %d pushes arrived", pushed.Load(), pending)
			}
		}
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		before := cpuTime(b)
		time.Sleep(idle) // the idle window being measured
		used := cpuTime(b) - before
		b.ReportMetric(float64(used.Milliseconds())/idle.Seconds(), "cpu-ms/s")
		b.ReportMetric(float64(m.HeapInuse)/(1<<20), "heap-MB")
		b.ReportMetric(float64(runtime.NumGoroutine()), "goroutines")
		b.ReportMetric(rssMB(b), "rss-MB")
		_ = cs.Close()
	}
}

// rssMB is the process's resident set, from /proc/self/status.
func rssMB(b *testing.B) float64 {
	raw, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	b.Fatal("no VmRSS in /proc/self/status")
	return 0
}

// cpuTime is the CPU time (user and system) this process has used.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
