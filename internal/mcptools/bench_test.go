package mcptools_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/mcptools"
	"github.com/mcp-elicitation/elicitation/internal/percentile"
)

// BenchmarkWakeLatency measures SPEC §7's wake latency on the embedded
// store: each iteration creates a request, starts an elicit_await (go-sdk
// client over HTTP, 10 s bound) and, once it waits in the store, lands a
// decision through the Service; the latency runs from the start of the
// decision's write (wake-ms) or from its commit (after-commit-ms) to the
// moment the client has the await's result. Run it with
// -benchtime=1000x for at least 1,000 decisions:
//
//	go test ./internal/mcptools -run '^$' -bench WakeLatency -benchtime 1000x
func BenchmarkWakeLatency(b *testing.B) {
	for _, mode := range []struct {
		name      string
		stateless bool
		version   string
	}{{"stateless-2026-07-28", true, proto20260728}, {"stateful-2025-11-25", false, proto20251125}} {
		b.Run(mode.name, func(b *testing.B) {
			e := newEnv(b, envOptions{stateless: mode.stateless})
			cs := e.connect(b, mode.version, "")
			ctx := context.Background()
			wake := make([]float64, 0, b.N)
			afterCommit := make([]float64, 0, b.N)
			b.ResetTimer()
			for i := range b.N {
				c, err := e.svc.Create(ctx, elicitation.Anonymous, elicitation.KindApproval, elicitation.Input{Message: "bench", Context: json.RawMessage(`1`)})
				if err != nil {
					b.Fatal(err)
				}
				done := e.awaitAsync(b, cs, map[string]any{"elicitationId": c.State.ID, "waitSeconds": 10})
				start := time.Now()
				if _, err := e.svc.Submit(ctx, c.State.ID, c.ReviewKey, elicitation.Submission{ID: "s", Decision: elicitation.DecisionSubmitted}); err != nil {
					b.Fatal(err)
				}
				committed := time.Now()
				r := receive(b, done, 10*time.Second)
				end := time.Now()
				if r.structured["status"] != "submitted" {
					b.Fatalf("decision %d: await = %v %q", i, r.structured, r.text)
				}
				wake = append(wake, ms(end.Sub(start)))
				afterCommit = append(afterCommit, ms(end.Sub(committed)))
			}
			b.StopTimer()
			b.ReportMetric(percentile.Of(wake, 50), "wake-p50-ms")
			b.ReportMetric(percentile.Of(wake, 99), "wake-p99-ms")
			b.ReportMetric(percentile.Of(afterCommit, 50), "after-commit-p50-ms")
			b.ReportMetric(percentile.Of(afterCommit, 99), "after-commit-p99-ms")
		})
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// BenchmarkStatus measures one elicit_status call end to end in this
// process (client, HTTP, SDK, tool, store), for profiling:
//
//	go test ./internal/mcptools -run '^$' -bench 'Status$' -cpuprofile /tmp/status.pprof
func BenchmarkStatus(b *testing.B) {
	for _, mode := range []struct {
		name      string
		stateless bool
		version   string
	}{{"stateless-2026-07-28", true, proto20260728}, {"stateless-2025-11-25", true, proto20251125}, {"stateful-2025-11-25", false, proto20251125}} {
		b.Run(mode.name, func(b *testing.B) {
			e := newEnv(b, envOptions{stateless: mode.stateless})
			cs := e.connect(b, mode.version, "")
			c := ok(b, cs, mcptools.ToolApproval, map[string]any{"message": "bench", "context": 1})
			args := map[string]any{"elicitationId": c["elicitationId"]}
			b.ReportAllocs()
			b.ResetTimer()
			ctx := context.Background()
			for range b.N {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: mcptools.ToolStatus, Arguments: args})
				if err != nil || res.IsError {
					b.Fatal(err, res)
				}
			}
		})
	}
}
