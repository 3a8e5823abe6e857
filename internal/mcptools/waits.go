package mcptools

import (
	"time"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/ratelimit"
)

// The defaults of Options.MaxWaits and WaitsPerPrincipal. A waiting
// elicit_await holds what a call in flight holds in the SDK (its HTTP
// request and connection, the SDK's call, the store's watch), tens of KB
// (docs/benchmarks.md), so the default cap bounds them to tens of megabytes.
const (
	DefaultMaxWaits          = 500
	DefaultWaitsPerPrincipal = 64
)

// The defaults of Options.MaxWatches and WatchesPerPrincipal. A watch that
// outlives its call on a session (a task's status notification, a URL
// push and its complete notice) holds one or two goroutines and the
// store's watch, 6 to 10 KB, until its request ends or its session
// closes; the caps keep one principal's requests from holding the
// process's memory (#38: 60,000 tasks from one key held 690 MB).
const (
	DefaultMaxWatches          = 10000
	DefaultWatchesPerPrincipal = 200
)

// slots bounds something held per principal (Principal) and in all: the
// elicit_await calls waiting at once on both eras (Server.waits), and the
// watches that outlive a call (Server.watches).
type slots struct{ *ratelimit.Slots }

func newSlots(max, share, defMax, defShare int) slots {
	return slots{ratelimit.NewSlots(limitOrDefault(max, defMax), limitOrDefault(share, defShare))}
}

// take holds a slot for principal's wait; release gives it back. A wait
// past either limit is refused with ErrBusy and a sentence saying which
// is full.
func (w slots) take(principal string) (release func(), err error) {
	if release, ok := w.Hold(principal); ok {
		return release, nil
	}
	mine, total := w.Held(principal)
	if share := w.Share(); share > 0 && mine >= share {
		return nil, elicitation.Busy("this client (%s) already has %d elicit_await calls waiting, its most at once; "+
			"retry this one in a few seconds, after one of them returns; to follow many requests, wait on one and check the others with elicit_status, "+
			"or create them as tasks (params.task) where your client supports MCP Tasks", principal, mine)
	}
	return nil, elicitation.Busy("this server already holds %d elicit_await calls waiting, its most at once (this client has %d); "+
		"retry in a few seconds, or check with elicit_status, which never waits", total, mine)
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
