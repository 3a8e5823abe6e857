package mcptools_test

import (
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/mcptools"
)

// TestAwaitLimits: waiting elicit_await calls are bounded per principal
// and in all, on the sessionless era and on sessions alike: a call past a
// limit is refused at once with busy and a sentence saying which limit is
// full and what to do; another principal is not held to the first one's
// share; a slot is free again once a wait returns.
func TestAwaitLimits(t *testing.T) {
	for _, era := range []struct {
		name      string
		stateless bool
		version   string
	}{{"sessionless-2026-07-28", true, proto20260728}, {"session-2025-11-25", false, proto20251125}} {
		t.Run(era.name, func(t *testing.T) {
			e := newEnv(t, envOptions{stateless: era.stateless, maxWaits: 3, waitShare: 2, auth: map[string]string{"ta": "alice", "tb": "bob"}})
			alice, bob := e.connect(t, era.version, "ta"), e.connect(t, era.version, "tb")
			type waiting struct {
				created map[string]any
				done    <-chan callResult
			}
			var held []waiting
			wait := func(cs *mcp.ClientSession) {
				c := ok(t, cs, mcptools.ToolApproval, map[string]any{"message": "m", "context": 1})
				held = append(held, waiting{c, e.awaitAsync(t, cs, map[string]any{"elicitationId": c["elicitationId"], "waitSeconds": 20})})
			}
			wait(alice)
			wait(alice)
			extra := ok(t, alice, mcptools.ToolApproval, map[string]any{"message": "m", "context": 1})
			args := map[string]any{"elicitationId": extra["elicitationId"], "waitSeconds": 20}
			if got := fails(t, alice, mcptools.ToolAwait, args, elicitation.CodeBusy); !strings.Contains(got, "this client (alice) already has 2 elicit_await calls waiting") || !strings.Contains(got, "retry this one in a few seconds") {
				t.Errorf("alice past her share: %q", got)
			}
			wait(bob) // bob is not held to alice's share
			bobsNext := ok(t, bob, mcptools.ToolApproval, map[string]any{"message": "m", "context": 1})
			if got := fails(t, bob, mcptools.ToolAwait, map[string]any{"elicitationId": bobsNext["elicitationId"]}, elicitation.CodeBusy); !strings.Contains(got, "this server already holds 3 elicit_await calls waiting") {
				t.Errorf("bob with the server full: %q", got)
			}
			// elicit_status never waits, so it is never refused.
			ok(t, bob, mcptools.ToolStatus, map[string]any{"elicitationId": bobsNext["elicitationId"]})
			for _, h := range held {
				e.decide(t, h.created, elicitation.Submission{Decision: elicitation.DecisionSubmitted})
				if r := receive(t, h.done, 10*time.Second); r.structured["status"] != "submitted" {
					t.Errorf("a held wait: %+v", r)
				}
			}
			// The slots are free again.
			if out := ok(t, alice, mcptools.ToolAwait, map[string]any{"elicitationId": extra["elicitationId"], "waitSeconds": 0.1}); out["status"] != "pending" {
				t.Errorf("alice after the waits returned: %v", out)
			}
		})
	}
}
