package mcptools_test

import (
	"strings"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/mcptools"
)

// Without API keys every request is anonymous, but the limits count each
// client address as a principal (docs/configuration.md: "its API key, else
// its IP address"): one machine's tasks and listens past its share never
// cost another machine's.

// TestKeylessWatchesPerAddress: a machine whose tasks hold its share of
// watches (here one) does not stop another machine's task from being
// watched for its status notification.
func TestKeylessWatchesPerAddress(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldOptions{keyless: true, watchShare: 1})
	bob := w.connect("tok-bob", core, -1, nil)
	startTask(t, bob, "elicit_approval", approvalArgs) // pending: holds bob's one watch
	sid, events := rawSession(t, w)                    // alice's machine
	alices := rawTask(t, w, sid, `{"message":"alice's","context":1}`)
	w.decide(alices, elicitation.Submission{Decision: elicitation.DecisionSubmitted})
	if p := nextStatus(t, events, 10*time.Second); p["taskId"] != alices {
		t.Fatalf("notification for %v, want alice's task %s", p["taskId"], alices)
	}
}

// TestKeylessListenSlotsPerAddress: a listen holds a wait slot of its
// client's address, the one that machine's elicit_await calls take: with a
// share of one, another machine's listen is still acknowledged, and the
// listening machine's own elicit_await is refused busy.
func TestKeylessListenSlotsPerAddress(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldOptions{keyless: true, waitShare: 1})
	bob, alice := w.connect("tok-bob", ext, -1, extCaps), w.connect("tok-alice", ext, -1, extCaps)
	bobs, alices := startExt(t, bob, "elicit_approval", approvalArgs), startExt(t, alice, "elicit_approval", approvalArgs)
	if ack := openListen(t, w, "tok-bob", bobs)("bob's listen's acknowledgement"); ack["method"] != "notifications/subscriptions/acknowledged" {
		t.Fatalf("bob's listen: %v", ack)
	}
	if ack := openListen(t, w, "tok-alice", alices)("alice's listen's acknowledgement"); ack["method"] != "notifications/subscriptions/acknowledged" {
		t.Fatalf("alice's listen beside bob's: %v, want acknowledged (another machine's share)", ack)
	}
	if got := fails(t, bob.CS, mcptools.ToolAwait, map[string]any{"elicitationId": bobs, "waitSeconds": 0.1}, elicitation.CodeBusy); !strings.Contains(got, "this client (address 192.0.2.2) already has 1") {
		t.Fatalf("bob's elicit_await while his listen holds his slot: %q", got)
	}
}
