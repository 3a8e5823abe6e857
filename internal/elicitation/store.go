package elicitation

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"slices"
	"time"
)

// Store persists requests. There are two implementations, an embedded one
// and a DynamoDB one, and one contract suite (package storetest) that both
// pass. A store has no clock: callers pass the time an operation happens, so
// that expiry is decided by the Service's clock and tests can set it.
//
// The layout every implementation follows: the small State apart from the
// immutable Payload and the Answer, so that a poll reads a few hundred bytes;
// audit entries apart from both, so that a writer of audit entries needs no
// right to write decisions.
//
// Store is the sum of the roles its users need; each user asks for the
// smallest (the Service for ServiceStore, a deliverer for the Outbox and
// Load, the cleanup loop for a Cleaner), and every implementation is held
// to all of them by the one contract.
type Store interface {
	Requests
	AuditLog
	Waiter
	Cleaner
	Outbox
	Inbox
	Owned
	Rules
	Delegations
}

// ServiceStore is what the Service uses: requests, their audit trails,
// waiting on them, the pending index of the reviewer's inbox and the
// owners' index of an agent's listing (never the outbox or the cleanup).
type ServiceStore interface {
	Requests
	AuditLog
	Waiter
	Inbox
	Owned
	Rules
}

// Requests holds the requests: their creation, reads and the transitions.
type Requests interface {
	// Create stores a new pending request together with its creation audit
	// entry and the deliveries of r.Outbox (all or nothing). It returns
	// ErrConflict if a request with that id exists.
	//
	// With r.MaxPending set, it returns ErrTooManyPending, writing
	// nothing, if r.State.Owner already has that many requests pending at
	// r.State.CreatedAt, across every handle and process on the same data.
	// A request stops counting when it is resolved (not by a vote short of
	// its quorum), and when it expires, without any write (its ExpiresAt
	// at or before the CreatedAt of the create that counts); a store may
	// count an expired request a little longer (dynamostore: up to
	// PendingRecount).
	Create(ctx context.Context, r Request, created AuditEntry) error

	// State reads the small part of a request, with a strongly consistent
	// read. It returns ErrNotFound if there is no such request.
	State(ctx context.Context, id string) (State, error)

	// Load reads the whole request. It returns ErrNotFound if there is no
	// such request.
	Load(ctx context.Context, id string) (Record, error)

	// Resolve lands a decision or a cancel, exactly once, across processes:
	// it succeeds only if the request is pending and t.At is before its
	// ExpiresAt, and writes the new state, the answer and the audit entry
	// together with the deliveries of t.Outbox, and removes those of
	// t.Withdraw from the outbox (all or nothing). It returns the state
	// after the call.
	// Resolution.Check and Resolution.Step are the rule; a store applies
	// them in one conditional write.
	//
	// A retry of the resolution that already won (t.IsRetryOf: the same
	// non-empty SubmissionID and the same decision and answer) succeeds
	// again without writing anything. Otherwise it
	// returns ErrNotFound; ErrExpired if the request is pending but t.At is
	// at or after ExpiresAt; ErrConflict (with the current state) if the
	// request is no longer pending.
	//
	// On a request whose State.Approvals is more than one, an approval
	// (StatusSubmitted) is a vote: it is recorded in State.Approvers and
	// the request stays pending until that many distinct reviewers (By)
	// approved the same answer; the vote that completes the quorum decides.
	// A second approval by the same reviewer gives ErrAlreadyApproved, one
	// for a place already filled (a delegate's for the delegator, For, or
	// the delegator's after their delegate's) ErrSeatApproved, one with
	// another answer ErrAnswerDiffers (all with the current state), and any
	// decline declines.
	Resolve(ctx context.Context, id string, t Resolution) (State, error)

	// Consume marks a submitted or declined request consumed (keeping its
	// decision and answer; the first ConsumedAt stays) and appends entry to
	// its audit trail, together. Consuming a consumed request only appends
	// the entry. It returns ErrNotFound, or ErrConflict with the current
	// state if the request is pending or canceled.
	Consume(ctx context.Context, id string, entry AuditEntry) (State, error)
}

// AuditLog holds each request's audit trail.
type AuditLog interface {
	// Append adds an entry to a request's audit trail. Entries of bounded
	// actions beyond AuditCap are counted, not stored. It returns
	// ErrNotFound if there is no such request.
	Append(ctx context.Context, id string, entry AuditEntry) error

	// AppendOnce adds entry to a request's audit trail together with mark,
	// unless mark is already recorded for that request: of any number of
	// calls with the same id and mark, through any handles, in any
	// processes, at the same time or not, exactly one reports first (and
	// its entry is stored); every other writes nothing and reports false.
	// A mark is the caller's name for a once-only event (an action and a
	// principal, say); marks are not entries: Audit does not list them,
	// and Cleanup removes them with the request. The entry is stored
	// whatever its action (its mark bounds it). It returns ErrNotFound if
	// there is no such request, and an error if mark is empty.
	AppendOnce(ctx context.Context, id, mark string, entry AuditEntry) (first bool, err error)

	// Audit reads a request's audit trail in order. It returns ErrNotFound
	// if there is no such request.
	Audit(ctx context.Context, id string) (AuditTrail, error)
}

// RequestLister lists the stored requests, for an operator command that
// checks them all (`elicitation audit verify`). Both stores implement it;
// it is apart from Store because nothing in the service needs it.
type RequestLister interface {
	// EachRequest calls fn with the id of every stored request, in no
	// particular order, until fn returns an error, which it returns.
	// dynamostore reads an eventually consistent index, which may miss a
	// request created a moment before.
	EachRequest(ctx context.Context, fn func(id string) error) error
}

// Waiter is how a wait learns of a request's decision: the one waiting
// primitive of every store, on which the Service builds Await, AwaitFunc
// and Watch (watchFunc).
type Waiter interface {
	// Watch calls wake whenever the request's stored state may have
	// changed, until stop is called: at once for a write through a handle
	// in this process, and within every() (asked before each read; nil:
	// the store's own interval) for one elsewhere where the store can only
	// poll (dynamostore, which wakes when a read finds the request no
	// longer pending or gone, or when reads have been failing for its
	// tolerance). A write that commits after Watch returned is never
	// missed; a wake may also come when nothing changed, so the caller
	// reads the state again. wake is never called under the store's locks
	// or in its transactions, but on a goroutine of its own, so it may
	// read the store or call stop. Once stop returns the watch is gone,
	// but a wake already on its way may still arrive: a wake after stop
	// must do no harm. Watch holds no goroutine while it waits.
	Watch(id string, every func() time.Duration, wake func()) (stop func())
}

// Cleaner removes what is past its retention.
type Cleaner interface {
	// Cleanup removes every request, and its audit trail, whose RetainUntil
	// is at or before now, and returns how many it removed.
	Cleanup(ctx context.Context, now time.Time) (int, error)
}

// Outbox holds the deliveries written with the events they tell (by Create
// and Resolve), taken one attempt at a time by a deliverer, removed when
// settled. A delivery is never lost by a crash: an attempt that is not
// settled before its lease ends is taken again.
type Outbox interface {

	// DueDeliveries lists the deliveries in the outbox that are due at now
	// (Delivery.Due), at most limit of each target, earliest NextAt first
	// (FairDue): a target with thousands waiting never hides another's,
	// and a target's new notice is not listed behind its retries.
	DueDeliveries(ctx context.Context, now time.Time, limit int) ([]Delivery, error)

	// ClaimDelivery takes the delivery d names (by ID and DueAt) for one
	// attempt, if it is still in the outbox and due at now: it counts the
	// attempt, sets a fresh Lease and NotBefore to until, and returns the
	// delivery as claimed. ok is false, and nothing is written, if it was
	// settled or is not due (another attempt holds it, or it backs off).
	// Of any number of concurrent claims at most one succeeds.
	ClaimDelivery(ctx context.Context, d Delivery, now, until time.Time) (claimed Delivery, ok bool, err error)

	// SettleDelivery ends the attempt that claimed d (d as ClaimDelivery
	// returned it) and appends entry to the request's audit trail, together:
	// with a zero retryAt it removes d from the outbox; otherwise it keeps d
	// for another attempt at retryAt. It returns ErrConflict, writing
	// nothing, if d's lease is no longer the one held. If the request is
	// gone (cleaned up) it removes d and appends nothing.
	SettleDelivery(ctx context.Context, d Delivery, retryAt time.Time, entry AuditEntry) error
}

// Resolution is a decision or a cancel.
type Resolution struct {
	// Status is StatusSubmitted, StatusDeclined or StatusCanceled.
	Status Status
	// SubmissionID names this attempt; a retry of the winning attempt with
	// the same id is answered as the success it was. Empty for cancels.
	SubmissionID string
	At           time.Time
	By           string
	// Via says where the decision was made (empty for cancels).
	Via Via
	// Issuer signed By in (a signed-in reviewer's Identity.Issuer); empty
	// without sign-in and for cancels.
	Issuer string
	// Answer is what was submitted (nil for declines and cancels).
	Answer *Answer
	// Detail goes into the audit entry (never argument values).
	Detail string
	// Rule names the standing approval that decided (Via ViaRule).
	Rule string
	// For is the reviewer By decided for through a delegation (empty:
	// for themselves); the audit entry's detail says so.
	For string
	// Outbox holds the deliveries that tell of this resolution; Withdraw
	// the scheduled ones it makes moot (the expiry notices).
	Outbox, Withdraw []Delivery
}

// AuditEntry is the entry a store writes together with the resolution.
func (t Resolution) AuditEntry() AuditEntry {
	e := AuditEntry{At: t.At, Principal: t.By, Detail: t.Detail, Via: t.Via, Issuer: t.Issuer}
	switch t.Status {
	case StatusCanceled:
		e.Action = ActionCanceled
	default:
		e.Action = ActionDecided
		e.Detail = t.ForNote(cmp.Or(e.Detail, string(t.Status)))
	}
	return e
}

// ForNote is detail with, for a decision made through a delegation, whom
// it was made for ("submitted, for alice@example.com").
func (t Resolution) ForNote(detail string) string {
	if t.For == "" {
		return detail
	}
	return detail + ", for " + t.For
}

// Apply returns s after t, as a store writes it.
func (t Resolution) Apply(s State) State {
	s.Status = t.Status
	s.DecidedAt = t.At
	s.DecidedBy = t.By
	s.SubmissionID = t.SubmissionID
	if t.Status != StatusCanceled {
		s.Decision = Decision(t.Status)
		s.DecidedVia = t.Via
		s.DecidedRule = t.Rule
		s.AnswerDigest = t.Digest()
	}
	return s
}

// IsRetryOf reports whether t repeats the resolution already recorded in s:
// the same submission id with the same decision and answer. This is the one
// rule for retries; every store applies it inside its conditional write, so
// it holds when two sends of one page overlap. The same page sent with
// another answer (Back, another choice, a second tab) is not a retry.
//
// On a quorum, an approval already counted (its submission id and answer
// in s.Approvers) is a retry too.
func (t Resolution) IsRetryOf(s State) bool {
	if t.SubmissionID == "" || t.Status == StatusCanceled {
		return false
	}
	if a, ok := s.approvalOf(t.SubmissionID); ok && t.Status == StatusSubmitted && a.AnswerDigest == t.Agreement() {
		return true
	}
	return s.SubmissionID == t.SubmissionID && s.Status != StatusPending && s.AnswerDigest == t.Digest()
}

// Digest names a decision and its answer: equal digests mean the same
// decision with the same answer. It is stored with the state (State.
// AnswerDigest) so that a store can tell a retry from another answer without
// reading the answer.
func (t Resolution) Digest() string {
	return AnswerDigest(Decision(t.Status), t.Answer)
}

// Agreement is the digest of what the approvals of a quorum must agree on:
// the decision and the answer without its comment (each reviewer's note
// may differ) and without the order of its picks (a page sends them in
// the order it shows them, which a filter changes: the same picks are the
// same answer). Without a comment, and with the picks in order, it is
// Digest.
func (t Resolution) Agreement() string {
	if t.Answer == nil {
		return t.Digest()
	}
	a := *t.Answer
	a.Comment = ""
	a.SelectedIDs = slices.Sorted(slices.Values(a.SelectedIDs))
	return AnswerDigest(Decision(t.Status), &a)
}

// AnswerDigest is the digest of decision d with answer a (nil and an empty
// answer are the same answer). Every part is length-prefixed, so no two
// different answers share an encoding.
func AnswerDigest(d Decision, a *Answer) string {
	if a == nil {
		a = &Answer{}
	}
	h := sha256.New()
	field := func(b []byte) {
		h.Write(binary.BigEndian.AppendUint64(nil, uint64(len(b))))
		h.Write(b)
	}
	field([]byte(d))
	field(a.Form)
	for _, id := range a.SelectedIDs {
		field([]byte(id))
	}
	if a.Comment != "" {
		// Marked with a NUL, which no option id can hold, so that a
		// comment never reads as one more id (and answers without a
		// comment keep the digest they had before comments existed).
		field(append([]byte{0}, a.Comment...))
	}
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil))
}

// MarkKey is the key a store files an AppendOnce mark under: a fixed-size
// digest of it, so that a mark of any length fits any store's keys and two
// different marks never share a key.
func MarkKey(mark string) string {
	sum := sha256.Sum256([]byte(mark))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}
