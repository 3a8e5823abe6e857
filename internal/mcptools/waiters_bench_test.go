package mcptools_test

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"runtime"
	"runtime/pprof"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

var waiterHeapProfile = flag.String("waiterheapprofile", "", "BenchmarkWaiterMemory: write a heap profile, taken while the waiters wait, to this file")

// BenchmarkWaiterMemory measures where the memory of waiting elicit_await
// calls goes today (#24.1): 2,000 awaits on pending requests, in this
// process (go-sdk client, HTTP over loopback, SDK server, tool, embedded
// store), then, while they all wait, the heap in use after a GC and the
// goroutines per waiter, with the goroutines grouped by what they run:
//
//	go test ./internal/mcptools -run '^$' -bench WaiterMemory -benchtime 1x -v [-args -waiterheapprofile /tmp/w.pprof]
//
// Client and server share the process, so each figure is both sides'.
func BenchmarkWaiterMemory(b *testing.B) {
	const waiters = 2000
	for _, mode := range []struct {
		name      string
		stateless bool
		version   string
	}{{"stateless-2026-07-28", true, proto20260728}, {"stateful-2025-11-25", false, proto20251125}} {
		b.Run(mode.name, func(b *testing.B) {
			for range b.N {
				e := newEnv(b, envOptions{stateless: mode.stateless, maxWaits: 2 * waiters, waitShare: 2 * waiters, maxWait: 10 * time.Minute})
				cs := e.connect(b, mode.version, "")
				ctx := context.Background()
				runtime.GC()
				var before runtime.MemStats
				runtime.ReadMemStats(&before)
				g0 := runtime.NumGoroutine()
				type pending struct {
					id, key string
					done    <-chan callResult
				}
				ps := make([]pending, waiters)
				for i := range ps {
					c, err := e.svc.Create(ctx, elicitation.Anonymous, elicitation.KindApproval, elicitation.Input{Message: "bench", Context: json.RawMessage(`1`)})
					if err != nil {
						b.Fatal(err)
					}
					ps[i] = pending{c.State.ID, c.ReviewKey, e.awaitAsync(b, cs, map[string]any{"elicitationId": c.State.ID, "waitSeconds": 60})}
				}
				runtime.GC()
				var during runtime.MemStats
				runtime.ReadMemStats(&during)
				g1 := runtime.NumGoroutine()
				if *waiterHeapProfile != "" {
					f, err := os.Create(*waiterHeapProfile)
					if err != nil {
						b.Fatal(err)
					}
					_ = pprof.Lookup("heap").WriteTo(f, 0)
					_ = f.Close()
				}
				logGoroutines(b, waiters)
				b.ReportMetric(float64(during.HeapInuse-min(during.HeapInuse, before.HeapInuse))/waiters/1024, "heap-KiB/waiter")
				b.ReportMetric(float64(during.StackInuse-min(during.StackInuse, before.StackInuse))/waiters/1024, "stack-KiB/waiter")
				b.ReportMetric(float64(g1-g0)/waiters, "goroutines/waiter")
				for _, p := range ps {
					if _, err := e.svc.Submit(ctx, p.id, p.key, elicitation.Submission{ID: "s", Decision: elicitation.DecisionSubmitted}); err != nil {
						b.Fatal(err)
					}
				}
				for _, p := range ps {
					if r := receive(b, p.done, 30*time.Second); r.structured["status"] != "submitted" {
						b.Fatalf("await = %v %q", r.structured, r.text)
					}
				}
			}
		})
	}
}

// logGoroutines logs how many goroutines per waiter run each kind of
// work, named by the innermost frame of ours, the SDK's or net/http's.
func logGoroutines(b *testing.B, waiters int) {
	buf := make([]byte, 64<<20)
	buf = buf[:runtime.Stack(buf, true)]
	counts := map[string]int{}
	for _, g := range strings.Split(string(buf), "\n\n") {
		counts[kindOf(g)]++
	}
	kinds := make([]string, 0, len(counts))
	for k := range counts {
		kinds = append(kinds, k)
	}
	sort.Slice(kinds, func(i, j int) bool { return counts[kinds[i]] > counts[kinds[j]] })
	for _, k := range kinds {
		if counts[k] >= waiters/2 {
			b.Logf("%5.2f goroutines/waiter  %s", float64(counts[k])/float64(waiters), k)
		}
	}
}

func kindOf(stack string) string {
	for _, line := range strings.Split(stack, "\n") {
		for _, mark := range []string{"internal/boltstore.", "internal/mcptools.", "go-sdk/mcp.", "go-sdk/internal/jsonrpc2.", "net/http.", "bufio."} {
			if i := strings.Index(line, mark); i >= 0 && !strings.HasPrefix(line, "\t") {
				name, _, _ := strings.Cut(line[i:], "(0x")
				return name
			}
		}
	}
	return "other"
}
