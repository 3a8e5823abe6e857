package main

import (
	"net/http/httptest"
	"testing"

	"github.com/mcp-elicitation/elicitation/internal/mcptools"
)

// BenchmarkCall is the CPU-per-call comparison of run in one process, for
// profiling (-cpuprofile, then go tool pprof -diff_base between two
// sub-benchmarks' profiles) and for allocations per call: one session of
// the load generator calling ours (elicit_status on a stored request) and
// the bare go-sdk anchor (echo) over loopback HTTP, each mode as run
// serves it. The figures include the client's side, which is the same
// code for both.
//
//	go test ./cmd/elicitation-bench -run '^$' -bench Call -benchmem
func BenchmarkCall(b *testing.B) {
	for _, c := range []struct {
		name string
		m    mode
	}{
		{"sessions/ours", mode{}},
		{"sessions/bare", mode{bare: true}},
		{"sessions/bare-resumable", mode{bare: true, resumable: true}},
		{"stateless/ours", mode{stateless: true}},
		{"stateless/bare", mode{stateless: true, bare: true}},
	} {
		b.Run(c.name, func(b *testing.B) {
			h, closeStore, err := benchHandler(c.m)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(closeStore)
			srv := httptest.NewServer(h)
			b.Cleanup(srv.Close)
			url := srv.URL + "/mcp"
			tool, args := "echo", map[string]any{"message": "hi"}
			if !c.m.bare {
				id, err := createOne(url)
				if err != nil {
					b.Fatal(err)
				}
				tool, args = mcptools.ToolStatus, map[string]any{"elicitationId": id}
			}
			s, err := newSession(url)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = s.close() })
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.callTool(tool, args); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
