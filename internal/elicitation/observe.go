package elicitation

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Observer is told what the Service did, once per event, for counting
// (package metrics encodes it as OpenTelemetry metrics or CloudWatch
// embedded metric lines). It must be quick and must not fail: it is called
// after the store write, on the caller's goroutine. The Service knows
// nothing of how the events are counted.
type Observer interface {
	// Created: a request was stored, pending.
	Created(st State)
	// Resolved: a decision (submitted or declined) or a cancel landed;
	// st is the state it left (DecidedAt is when). A vote short of a
	// quorum is not a resolution.
	Resolved(st State)
	// Expired: the request was noticed expired, pending at its ExpiresAt
	// (NoticeExpired): once per request, across processes.
	Expired(st State)
}

// observer is the Service's Observer, a no-op without one.
func (s *Service) observer() Observer {
	if s.observe == nil {
		return nopObserver{}
	}
	return s.observe
}

type nopObserver struct{}

func (nopObserver) Created(State)  {}
func (nopObserver) Resolved(State) {}
func (nopObserver) Expired(State)  {}

// resolved tells the observer of a resolution t that landed as st, unless
// st is not t's (a retry answered with the state the first send left) or
// still pending (a vote short of a quorum).
func (s *Service) resolved(st State, t Resolution) {
	if st.Status != StatusPending && st.DecidedAt.Equal(t.At) && st.DecidedBy == t.By {
		s.observer().Resolved(st)
	}
}

// ActionExpired is the audit entry NoticeExpired writes, once, for a
// request found pending past its expiresAt: the clock, not a person,
// ended it.
const ActionExpired Action = "expired"

// Clock is the principal of the entries the clock writes (ActionExpired).
const Clock = "clock"

// expiredMark is the AppendOnce mark of a request's expiry entry.
const expiredMark = "expired"

// NoticeExpired finds the requests that were pending at since and have
// expired by now (at most MaxInbox, from the pending index), records each
// one's expiry in its audit trail once (AppendOnce: of any number of
// sweeps, in any processes, one records it) and tells the observer of
// those it recorded. It returns how many it recorded. A caller sweeps
// from its previous sweep's now, before a cleanup removes expired entries
// from the index.
func (s *Service) NoticeExpired(ctx context.Context, since time.Time) (int, error) {
	now := s.now()
	entries, err := s.store.PendingEntries(ctx, since, MaxInbox)
	if err != nil {
		return 0, fmt.Errorf("notice expired: %w", err)
	}
	n := 0
	for _, e := range entries {
		if e.ExpiresAt.After(now) {
			break // earliest ExpiresAt first: the rest are pending
		}
		entry := AuditEntry{At: e.ExpiresAt.UTC(), Action: ActionExpired, Principal: Clock}
		first, err := s.store.AppendOnce(ctx, e.ID, expiredMark, entry)
		if errors.Is(err, ErrNotFound) {
			continue // cleaned up meanwhile
		}
		if err != nil {
			return n, fmt.Errorf("notice expired %s: %w", e.ID, err)
		}
		if first {
			n++
			s.observer().Expired(State{ID: e.ID, Kind: e.Kind, Owner: e.Owner, Status: StatusExpired, CreatedAt: e.CreatedAt, ExpiresAt: e.ExpiresAt})
		}
	}
	return n, nil
}

// Open counts what the Service holds open now: waits (Await, AwaitFunc
// and Watch in progress) and, among them, the long watches of Watch (a
// task's status notice, a push's complete notice).
type Open struct {
	Waits, Watches int64
}

// Open reads what the Service holds open now.
func (s *Service) Open() Open {
	return Open{Waits: s.waiting.Load(), Watches: s.watching.Load()}
}
