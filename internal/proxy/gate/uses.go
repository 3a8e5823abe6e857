package gate

import (
	"crypto/rand"
	"sync"
	"time"
)

// maxStateUses bounds the used request states the gate remembers. A full
// record refuses further uses until states expire (the retry is asked
// again): forgetting one early would let it be used twice.
const maxStateUses = 100000

// stateUses makes each request state the gate seals for a 2026-07-28 host
// usable once: a state names the process that sealed it (proc) and carries
// a nonce, and the first retry that opens it takes the nonce. A resend of
// the same state, here or in another process sharing the state key, is
// asked again rather than answered from the state, so a host's approval
// forwards its call at most once.
type stateUses struct {
	proc string

	mu   sync.Mutex
	used map[string]time.Time // nonce -> when it may be forgotten
}

func newStateUses() *stateUses {
	return &stateUses{proc: rand.Text()}
}

// stamp names the state st as sealed by this process, with a fresh nonce.
func (u *stateUses) stamp(st *retryState) {
	st.Proc, st.Nonce = u.proc, rand.Text()
}

// take reports whether st was sealed by this process and is used here for
// the first time, and records its use until it expires.
func (u *stateUses) take(st retryState, now time.Time) bool {
	if st.Proc != u.proc || st.Nonce == "" {
		return false
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if _, seen := u.used[st.Nonce]; seen {
		return false
	}
	if u.used == nil {
		u.used = map[string]time.Time{}
	}
	if len(u.used) >= maxStateUses {
		for n, until := range u.used {
			if !now.Before(until) {
				delete(u.used, n)
			}
		}
		if len(u.used) >= maxStateUses {
			return false
		}
	}
	u.used[st.Nonce] = now.Add(retryTTL + time.Minute)
	return true
}
