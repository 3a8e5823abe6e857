package gate

import (
	"github.com/mcp-elicitation/elicitation/internal/mcptools"
	"github.com/mcp-elicitation/elicitation/internal/ratelimit"
)

// The bounds on the gate's waits for a reviewer held at once: each
// client's (its principal) and all clients' together. All of them are one
// principal's at the elicitation service, which holds at most
// mcptools.DefaultWaitsPerPrincipal of one principal's elicit_await calls
// at once and refuses the rest; the gate's bound for all is that share,
// so the service never refuses a wait, and one client's is an eighth of
// it. A call past either bound does not wait: it returns its review's
// pending result at once.
const (
	maxWaits          = mcptools.DefaultWaitsPerPrincipal
	maxWaitsPerClient = maxWaits / 8
)

// newWaitSlots are the gate's bounds on its waits (ratelimit.Slots).
func newWaitSlots() *ratelimit.Slots { return ratelimit.NewSlots(maxWaits, maxWaitsPerClient) }
