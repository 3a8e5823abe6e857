package mcptools

import (
	"sync"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// The defaults of Options.MaxWaits and WaitsPerPrincipal. A waiting
// elicit_await holds what a call in flight holds in the SDK (its HTTP
// request and connection, the SDK's call, the store's watch), tens of KB
// (docs/benchmarks.md), so the default cap bounds them to tens of megabytes.
const (
	DefaultMaxWaits          = 500
	DefaultWaitsPerPrincipal = 64
)

// waitSlots bounds the elicit_await calls waiting at once, per principal
// (Principal) and in all, on both eras. A call past either limit is
// refused at once with ErrBusy and a sentence saying which is full.
type waitSlots struct {
	max, share int // 0: no cap

	mu    sync.Mutex
	total int
	by    map[string]int
}

func newWaitSlots(o Options) *waitSlots {
	w := &waitSlots{max: o.MaxWaits, share: o.WaitsPerPrincipal, by: map[string]int{}}
	w.max = limitOrDefault(w.max, DefaultMaxWaits)
	w.share = limitOrDefault(w.share, DefaultWaitsPerPrincipal)
	if w.max > 0 && (w.share == 0 || w.share > w.max) {
		w.share = w.max
	}
	return w
}

// take holds a slot for principal's wait; release gives it back.
func (w *waitSlots) take(principal string) (release func(), err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case w.share > 0 && w.by[principal] >= w.share:
		return nil, elicitation.Busy("this client (%s) already has %d elicit_await calls waiting, its most at once; "+
			"retry this one in a few seconds, after one of them returns; to follow many requests, wait on one and check the others with elicit_status, "+
			"or create them as tasks (params.task) where your client supports MCP Tasks", principal, w.by[principal])
	case w.max > 0 && w.total >= w.max:
		return nil, elicitation.Busy("this server already holds %d elicit_await calls waiting, its most at once (this client has %d); "+
			"retry in a few seconds, or check with elicit_status, which never waits", w.total, w.by[principal])
	}
	w.total++
	w.by[principal]++
	var once sync.Once
	return func() {
		once.Do(func() {
			w.mu.Lock()
			defer w.mu.Unlock()
			w.total--
			if w.by[principal]--; w.by[principal] <= 0 {
				delete(w.by, principal)
			}
		})
	}, nil
}

// limitOrDefault reads a configured limit: zero is the default, a negative
// value is none (0, which the caps read as no limit), anything else itself.
func limitOrDefault[T int | time.Duration](v, def T) T {
	switch {
	case v == 0:
		return def
	case v < 0:
		return 0
	}
	return v
}
