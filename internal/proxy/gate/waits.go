package gate

import (
	"sync"

	"github.com/mcp-elicitation/elicitation/internal/mcptools"
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

// waitSlots counts the waits held, per principal and in all.
type waitSlots struct {
	mu    sync.Mutex
	by    map[string]int
	total int
}

// hold takes a wait for principal unless a bound is reached; release
// gives it back.
func (w *waitSlots) hold(principal string) (release func(), ok bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.by[principal] >= maxWaitsPerClient || w.total >= maxWaits {
		return nil, false
	}
	if w.by == nil {
		w.by = map[string]int{}
	}
	w.by[principal]++
	w.total++
	return func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.total--
		if w.by[principal]--; w.by[principal] <= 0 {
			delete(w.by, principal)
		}
	}, true
}
