package gate

import (
	"sync"
	"time"
)

// maxPending bounds the review requests the gate remembers; beyond it the
// oldest is forgotten (its retry asks again).
const maxPending = 10000

// pendingTable remembers the review request asked for each (kind, tool,
// argument digest), so that the agent's retry with the same arguments picks
// up the answer instead of asking again. An entry is claimed once: the call
// that takes a decided entry acts on it, and any other call asks anew.
type pendingTable struct {
	mu      sync.Mutex
	entries map[string]*pendingEntry
}

type pendingEntry struct {
	ticket  Ticket
	expires time.Time
	added   time.Time
}

func (t *pendingTable) get(key string, now time.Time) (*pendingEntry, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.entries[key]
	if ok && !e.expires.IsZero() && !now.Before(e.expires) {
		delete(t.entries, key)
		return nil, false
	}
	return e, ok
}

func (t *pendingTable) put(key string, e *pendingEntry) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.entries == nil {
		t.entries = map[string]*pendingEntry{}
	}
	if len(t.entries) >= maxPending {
		var oldest string
		for k, x := range t.entries {
			if oldest == "" || x.added.Before(t.entries[oldest].added) {
				oldest = k
			}
		}
		delete(t.entries, oldest)
	}
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
	delete(t.entries, key)
	return true
}
