package gate

import (
	"fmt"
	"sync"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// The bounds on the reviews the gate keeps: each client's (its principal:
// the one client of stdio, an address on HTTP) and all clients' together.
// A review past a bound is refused (tooManyReviews), never made room for
// by forgetting another client's.
//
// All of the gate's requests are one principal's at the elicitation
// service (the embedded service's anonymous principal; a URL service's
// API key), whose pending requests the service caps at
// --max-pending-per-principal (elicitation.DefaultMaxPending, which the
// embedded service keeps). The gate's bound for all clients is that cap,
// so the gate refuses, saying why, before the service refuses everyone
// (elicitation_failed); one client's bound is a tenth of it.
const (
	maxPending          = elicitation.DefaultMaxPending
	maxPendingPerClient = maxPending / 10
)

// pendingTable remembers the review request asked for each (kind, tool,
// argument digest, client), so that the client's retry with the same
// arguments picks up the answer instead of asking again. An entry is
// claimed once: the call that takes a decided entry acts on it, and any
// other call asks anew. It counts each principal's entries, and the
// reviews being asked for (reserve), against the bounds above.
type pendingTable struct {
	mu      sync.Mutex
	entries map[string]*pendingEntry
	held    map[string]int // principal -> entries and reservations
	total   int
}

type pendingEntry struct {
	ticket    Ticket
	expires   time.Time
	principal string
}

// tooManyReviews refuses a review past a bound: the client's own (own)
// or all clients' together.
type tooManyReviews struct {
	own   bool
	limit int
}

func (e *tooManyReviews) Error() string {
	if e.own {
		return fmt.Sprintf("the client already has %d reviews not picked up, the most the gate keeps for one client", e.limit)
	}
	return fmt.Sprintf("the gate already keeps %d reviews open for all its clients, the most it keeps", e.limit)
}

func (t *pendingTable) get(key string, now time.Time) (*pendingEntry, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.entries[key]
	if ok && expired(e, now) {
		t.drop(key)
		return nil, false
	}
	return e, ok
}

func expired(e *pendingEntry, now time.Time) bool {
	return !e.expires.IsZero() && !now.Before(e.expires)
}

// reserve counts a review the principal is about to ask for, or refuses
// it past a bound (expired entries are forgotten first). put stores it;
// release, if asking failed, gives the place back.
func (t *pendingTable) reserve(principal string, now time.Time) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.held[principal] >= maxPendingPerClient || t.total >= maxPending {
		for k, e := range t.entries {
			if expired(e, now) {
				t.drop(k)
			}
		}
	}
	switch {
	case t.held[principal] >= maxPendingPerClient:
		return &tooManyReviews{own: true, limit: maxPendingPerClient}
	case t.total >= maxPending:
		return &tooManyReviews{limit: maxPending}
	}
	if t.held == nil {
		t.held = map[string]int{}
	}
	t.held[principal]++
	t.total++
	return nil
}

func (t *pendingTable) release(principal string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.free(principal)
}

// put stores e, reserved for e.principal, under key (an entry it
// replaces gives its place back).
func (t *pendingTable) put(key string, e *pendingEntry) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.entries == nil {
		t.entries = map[string]*pendingEntry{}
	}
	t.drop(key)
	t.entries[key] = e
}

// claim removes e if it is still the entry for key and reports whether this
// caller took it.
func (t *pendingTable) claim(key string, e *pendingEntry) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.entries[key] != e {
		return false
	}
	t.drop(key)
	return true
}

// drop removes key's entry, if any, giving its place back; t.mu is held.
func (t *pendingTable) drop(key string) {
	if e, ok := t.entries[key]; ok {
		delete(t.entries, key)
		t.free(e.principal)
	}
}

// free gives back one of the principal's places; t.mu is held.
func (t *pendingTable) free(principal string) {
	t.total--
	if t.held[principal]--; t.held[principal] <= 0 {
		delete(t.held, principal)
	}
}
