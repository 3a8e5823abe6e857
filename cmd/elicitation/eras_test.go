package main

import (
	"testing"

	"github.com/mcp-elicitation/elicitation/internal/mcptools/pushtest"
)

// TestErasOnDefaultEndpoint: the local server's default /mcp serves every
// era at once (sessions, and 2026-07-28 without), each with and without
// URL elicitation: pushed on the session (2025-11-25) and in an
// input-required result (2026-07-28), plain results elsewhere.
func TestErasOnDefaultEndpoint(t *testing.T) {
	m := start(t, "--data-dir", t.TempDir(), "--max-wait", "10s")
	pushtest.Run(t, pushtest.Target{MCPURL: m.MCPURL, Sessions: true, SessionlessPush: true})
}

// TestErasPushOff: --push=false gives every host plain results.
func TestErasPushOff(t *testing.T) {
	m := start(t, "--data-dir", t.TempDir(), "--push=false")
	tg := pushtest.Target{MCPURL: m.MCPURL}
	for _, era := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(era, func(t *testing.T) { pushtest.RunOne(t, tg, era, true) })
	}
}
