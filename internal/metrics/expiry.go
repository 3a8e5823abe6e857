package metrics

import (
	"cmp"
	"context"
	"sync"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// DefaultLookback is how far back the first sweep of a process looks for
// requests that expired (while no process swept).
const DefaultLookback = 24 * time.Hour

// Expiry notices expired requests (elicitation.Service.NoticeExpired),
// each sweep from where the previous one ended, so that the observer
// counts each expiry once; a sweep must run before a cleanup removes
// expired requests from the pending index (the local server's cleanup
// pass sweeps first).
type Expiry struct {
	Service *elicitation.Service
	// Pending and Gauges, when both are set, make each sweep also record
	// the requests pending now into Gauges (Counts.RecordPending): on
	// Lambda, where no scrape reads the gauges.
	Pending elicitation.Inbox
	Gauges  *Counts
	// Lookback is how far back the first sweep looks; default
	// DefaultLookback.
	Lookback time.Duration

	mu   sync.Mutex
	last time.Time
}

// Sweep notices the requests expired since the previous sweep and
// returns how many it recorded.
func (e *Expiry) Sweep(ctx context.Context) (int, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.Service.Now()
	since := e.last
	if since.IsZero() {
		since = now.Add(-cmp.Or(e.Lookback, DefaultLookback))
	}
	n, err := e.Service.NoticeExpired(ctx, since)
	if err != nil {
		return n, err
	}
	e.last = now
	if e.Pending != nil && e.Gauges != nil {
		err = e.Gauges.RecordPending(ctx, e.Pending, now)
	}
	return n, err
}
