package mcptools_test

import (
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/mcptools"
)

// waitSeconds can only shorten the wait: one too small to be a whole
// nanosecond is the shortest wait, not the server's full bound.
func TestAwaitTinyWaitSeconds(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{maxWait: 5 * time.Second})
	cs := e.connect(t, "", "")
	c := ok(t, cs, mcptools.ToolApproval, map[string]any{"message": "Ship?", "context": 1})
	start := time.Now()
	got := ok(t, cs, mcptools.ToolAwait, map[string]any{"elicitationId": c["elicitationId"], "waitSeconds": 1e-10})
	if took := time.Since(start); got["status"] != "pending" || took > 2*time.Second {
		t.Fatalf("await with waitSeconds 1e-10: %v after %v; want pending at once", got, took)
	}
}
