package gate

import (
	"crypto/rand"
	"sync"
	"time"
)

// stateUses makes each request state the gate seals for a 2026-07-28 host
// usable once: a state names the process that sealed it (proc) and carries
// a serial number, and the first retry that opens it takes the number. A
// resend of the same state, here or in another process sharing the state
// key, is asked again rather than answered from the state, so a host's
// approval forwards its call at most once.
//
// The record never refuses a first use: it holds one bit per state sealed
// within the last retryTTL (and a minute's margin), whether used or not,
// and forgets the bits of states that have expired. A client that makes
// calls by the hundred thousand costs it bits, not the other clients their
// answers.
type stateUses struct {
	proc string

	mu sync.Mutex
	// next is the serial the next sealed state gets; serials below base
	// have expired. used holds a bit for each serial from base (a
	// multiple of 64) up to next.
	next, base uint64
	used       []uint64
	// marks, one a minute of sealing, oldest first, say that every serial
	// below serial was sealed at or before at: once a mark is older than a
	// state lives, those serials have expired.
	marks []usesMark
}

type usesMark struct {
	serial    uint64
	start, at time.Time
}

// usesLife is how long a sealed state may still be taken: its time to live
// and a margin for the clock.
const usesLife = retryTTL + time.Minute

func newStateUses() *stateUses {
	return &stateUses{proc: rand.Text()}
}

// stamp names the state st as sealed by this process at now, with the next
// serial number.
func (u *stateUses) stamp(st *retryState, now time.Time) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.expire(now)
	if u.next-u.base == uint64(len(u.used))*64 {
		u.used = append(u.used, 0)
	}
	st.Proc, st.Serial = u.proc, u.next+1 // 0 means no serial
	u.next++
	if n := len(u.marks); n > 0 && now.Sub(u.marks[n-1].start) < time.Minute {
		u.marks[n-1].serial, u.marks[n-1].at = u.next, now
	} else {
		u.marks = append(u.marks, usesMark{serial: u.next, start: now, at: now})
	}
}

// take reports whether st was sealed by this process and is used here for
// the first time, and records its use.
func (u *stateUses) take(st retryState, now time.Time) bool {
	if st.Proc != u.proc || st.Serial == 0 {
		return false
	}
	serial := st.Serial - 1
	u.mu.Lock()
	defer u.mu.Unlock()
	u.expire(now)
	if serial < u.base || serial >= u.next {
		return false
	}
	i := serial - u.base
	word, bit := &u.used[i/64], uint64(1)<<(i%64)
	if *word&bit != 0 {
		return false
	}
	*word |= bit
	return true
}

// expire forgets the serials of the states that can no longer be taken.
func (u *stateUses) expire(now time.Time) {
	k := 0
	for k < len(u.marks) && now.Sub(u.marks[k].at) >= usesLife {
		k++
	}
	if k == 0 {
		return
	}
	// Every serial below marks[k-1].serial has expired.
	base := u.marks[k-1].serial &^ 63
	u.marks = append([]usesMark(nil), u.marks[k:]...)
	if base > u.base {
		// A fresh slice, so that a flood's bits are freed once expired.
		u.used = append([]uint64(nil), u.used[(base-u.base)/64:]...)
		u.base = base
	}
}
