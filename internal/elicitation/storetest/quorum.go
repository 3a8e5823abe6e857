package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// NewQuorum returns a pending selection that needs approvals from n
// distinct reviewers.
func NewQuorum(t testing.TB, n int) elicitation.Request {
	t.Helper()
	r := NewSelection(t, 4, time.Hour)
	r.State.Approvals = n
	return r
}

func vote(by, sub, pick string, at time.Duration) elicitation.Resolution {
	return elicitation.Resolution{Status: elicitation.StatusSubmitted, SubmissionID: sub, At: T0.Add(at), By: by, Answer: &elicitation.Answer{SelectedIDs: []string{pick}}}
}

func approvers(st elicitation.State) string {
	var by []string
	for _, a := range st.Approvers {
		by = append(by, a.By)
	}
	return strings.Join(by, ",")
}

// testQuorum: approvals from distinct reviewers accumulate through both
// handles and the one that completes the quorum decides; the same
// reviewer twice, a different answer and a late approval are refused;
// any decline declines.
func testQuorum(t *testing.T, open Factory) {
	ctx := ctxT(t)
	a, b := open(t)
	t.Run("two reviewers reach it, one twice does not", func(t *testing.T) { quorumTwoReviewers(t, ctx, a, b) })
	t.Run("any decline declines", func(t *testing.T) { quorumAnyDecline(t, ctx, a, b) })
	t.Run("an approval short of the quorum tells nobody", func(t *testing.T) { quorumShortTellsNobody(t, ctx, a, b) })
	t.Run("approval at expiry", func(t *testing.T) { quorumAtExpiry(t, ctx, a, b) })
	t.Run("racing reviewers: exactly the quorum counts, once", func(t *testing.T) { quorumRacingReviewers(t, ctx, a, b) })
	t.Run("one reviewer racing itself counts once", func(t *testing.T) { quorumReviewerRacingItself(t, ctx, a, b) })
	t.Run("a delegate fills the delegator's place", func(t *testing.T) { quorumDelegateSeat(t, ctx, a, b) })
}

// quorumDelegateSeat: an approval for alice by her delegate (For) fills
// alice's place, as read through the other handle: alice's own approval
// and another delegate's for her are refused (ErrSeatApproved), bob's
// completes the quorum and keeps whom the first was for.
func quorumDelegateSeat(t *testing.T, ctx context.Context, a, b elicitation.Store) {
	r := NewQuorum(t, 2)
	mustCreate(t, a, r)
	forAlice := func(by, sub string) elicitation.Resolution {
		v := vote(by, sub, "opt-1", time.Minute)
		v.For = "alice@example.com"
		return v
	}
	mustResolve(ctx, t, a, r.State.ID, forAlice("eve@example.com", "s1"))
	for name, v := range map[string]elicitation.Resolution{
		"alice's own":           vote("alice@example.com", "s2", "opt-1", 2*time.Minute),
		"frank's, also for her": forAlice("frank@example.com", "s3"),
	} {
		_, err := b.Resolve(ctx, r.State.ID, v)
		wantErr(t, name+" after eve's for alice", err, elicitation.ErrSeatApproved)
	}
	st, err := b.Resolve(ctx, r.State.ID, vote("bob@example.com", "s4", "opt-1", 3*time.Minute))
	if err != nil || st.Status != elicitation.StatusSubmitted || approvers(st) != "eve@example.com,bob@example.com" || st.Approvers[0].For != "alice@example.com" {
		t.Fatalf("bob completes the quorum: %+v, %v", st, err)
	}
}

// quorumTwoReviewers is testQuorum's case "two reviewers reach it, one twice does not".
func quorumTwoReviewers(t *testing.T, ctx context.Context, a, b elicitation.Store) {
	r := NewQuorum(t, 2)
	mustCreate(t, a, r)
	st, err := a.Resolve(ctx, r.State.ID, vote("alice@example.com", "s1", "opt-1", time.Minute))
	if err != nil || st.Status != elicitation.StatusPending || approvers(st) != "alice@example.com" {
		t.Fatalf("first approval = %+v, %v; want pending with alice's approval", st, err)
	}
	if got, _ := b.State(ctx, r.State.ID); got.Status != elicitation.StatusPending || approvers(got) != "alice@example.com" || got.Approvals != 2 {
		t.Fatalf("state through the other handle = %+v", got)
	}
	if rec, _ := b.Load(ctx, r.State.ID); rec.Answer != nil {
		t.Errorf("an approval short of the quorum wrote an answer: %+v", rec.Answer)
	}
	// A retry of alice's approval is the success it was, through either handle.
	if st, err := b.Resolve(ctx, r.State.ID, vote("alice@example.com", "s1", "opt-1", 2*time.Minute)); err != nil || len(st.Approvers) != 1 {
		t.Fatalf("retried approval = %+v, %v", st, err)
	}
	quorumRefusedApprovals(t, ctx, a, b, r)
	// Bob approving the same answer decides.
	st, err = b.Resolve(ctx, r.State.ID, vote("bob@example.com", "s4", "opt-1", 5*time.Minute))
	if err != nil || st.Status != elicitation.StatusSubmitted || st.DecidedBy != "bob@example.com" || st.SubmissionID != "s4" || approvers(st) != "alice@example.com,bob@example.com" {
		t.Fatalf("completing approval = %+v, %v", st, err)
	}
	got, _ := a.State(ctx, r.State.ID)
	sameState(t, "decided state through the other handle", got, st)
	rec, _ := a.Load(ctx, r.State.ID)
	if rec.Answer == nil || strings.Join(rec.Answer.SelectedIDs, ",") != "opt-1" {
		t.Errorf("answer = %+v, want opt-1", rec.Answer)
	}
	quorumAfterDecision(t, ctx, a, b, r)
}

// quorumRefusedApprovals: with one of two approvals in, the same reviewer
// from a fresh page and another reviewer approving another answer are
// refused, and nothing changes.
func quorumRefusedApprovals(t *testing.T, ctx context.Context, a, b elicitation.Store, r elicitation.Request) {
	// Alice again, from a fresh page: not a second approval.
	st, err := b.Resolve(ctx, r.State.ID, vote("alice@example.com", "s2", "opt-1", 3*time.Minute))
	wantErr(t, "alice's second approval", err, elicitation.ErrAlreadyApproved)
	if st.Status != elicitation.StatusPending || len(st.Approvers) != 1 {
		t.Errorf("state returned with ErrAlreadyApproved = %+v", st)
	}
	// Bob approving another answer does not count either.
	_, err = a.Resolve(ctx, r.State.ID, vote("bob@example.com", "s3", "opt-2", 4*time.Minute))
	wantErr(t, "bob's approval of another answer", err, elicitation.ErrAnswerDiffers)
	if got, _ := a.State(ctx, r.State.ID); got.Status != elicitation.StatusPending || len(got.Approvers) != 1 {
		t.Fatalf("after refused approvals: %+v", got)
	}
}

// quorumAfterDecision: once a quorum decided, both approvals' retries still
// succeed; anyone else is late.
func quorumAfterDecision(t *testing.T, ctx context.Context, a, b elicitation.Store, r elicitation.Request) {
	for _, v := range []elicitation.Resolution{vote("alice@example.com", "s1", "opt-1", 6*time.Minute), vote("bob@example.com", "s4", "opt-1", 6*time.Minute)} {
		if _, err := a.Resolve(ctx, r.State.ID, v); err != nil {
			t.Errorf("retry of %s's approval after the decision: %v", v.By, err)
		}
	}
	_, err := a.Resolve(ctx, r.State.ID, vote("carol@example.com", "s5", "opt-1", 7*time.Minute))
	wantErr(t, "carol's late approval", err, elicitation.ErrConflict)
	tr, _ := b.Audit(ctx, r.State.ID)
	wantActions(t, tr, elicitation.ActionCreated, elicitation.ActionApproved, elicitation.ActionDecided)
	if e := tr.Entries[1]; e.Principal != "alice@example.com" || e.Detail != "1 of 2 approvals" {
		t.Errorf("approval entry = %+v", e)
	}
}

// quorumAnyDecline is testQuorum's case "any decline declines".
func quorumAnyDecline(t *testing.T, ctx context.Context, a, b elicitation.Store) {
	r := NewQuorum(t, 3)
	mustCreate(t, a, r)
	mustResolve(ctx, t, a, r.State.ID, vote("alice@example.com", "s1", "opt-0", time.Minute))
	st, err := b.Resolve(ctx, r.State.ID, elicitation.Resolution{Status: elicitation.StatusDeclined, SubmissionID: "s2", At: T0.Add(2 * time.Minute), By: "bob@example.com"})
	if err != nil || st.Status != elicitation.StatusDeclined || st.DecidedBy != "bob@example.com" || approvers(st) != "alice@example.com" {
		t.Fatalf("decline = %+v, %v", st, err)
	}
	_, err = a.Resolve(ctx, r.State.ID, vote("carol@example.com", "s3", "opt-0", 3*time.Minute))
	wantErr(t, "approval after the decline", err, elicitation.ErrConflict)
	if rec, _ := a.Load(ctx, r.State.ID); rec.Answer != nil {
		t.Errorf("declined quorum has an answer: %+v", rec.Answer)
	}
}

// quorumShortTellsNobody is testQuorum's case "an approval short of the quorum tells nobody".
func quorumShortTellsNobody(t *testing.T, ctx context.Context, a, b elicitation.Store) {
	r := withOutbox(NewQuorum(t, 2), "ops")
	mustCreate(t, a, r)
	withNotices := func(v elicitation.Resolution) elicitation.Resolution {
		v.Outbox = []elicitation.Delivery{elicitation.NewDelivery(r.State, elicitation.EventDecided, "ops", v.At, v.At)}
		v.Withdraw = []elicitation.Delivery{delivery(t, r, elicitation.EventExpired, "ops")}
		return v
	}
	mustResolve(ctx, t, a, r.State.ID, withNotices(vote("alice@example.com", "s1", "opt-0", time.Minute)))
	wantDue(t, "after one of two approvals, past expiry", b, r.State.ExpiresAt.Add(time.Hour), id(r, elicitation.EventCreated, "ops"), id(r, elicitation.EventExpired, "ops"))
	mustResolve(ctx, t, b, r.State.ID, withNotices(vote("bob@example.com", "s2", "opt-0", 2*time.Minute)))
	wantDue(t, "after the quorum, past expiry", a, r.State.ExpiresAt.Add(time.Hour), id(r, elicitation.EventCreated, "ops"), id(r, elicitation.EventDecided, "ops"))
}

// quorumAtExpiry is testQuorum's case "approval at expiry".
func quorumAtExpiry(t *testing.T, ctx context.Context, a, b elicitation.Store) {
	r := NewQuorum(t, 2)
	mustCreate(t, a, r)
	mustResolve(ctx, t, a, r.State.ID, vote("alice@example.com", "s1", "opt-0", time.Minute))
	late := vote("bob@example.com", "s2", "opt-0", 0)
	late.At = r.State.ExpiresAt
	_, err := b.Resolve(ctx, r.State.ID, late)
	wantErr(t, "approval at expiry", err, elicitation.ErrExpired)
}

// quorumRacingReviewers is testQuorum's case "racing reviewers: exactly the quorum counts, once".
func quorumRacingReviewers(t *testing.T, ctx context.Context, a, b elicitation.Store) {
	r := NewQuorum(t, 2)
	mustCreate(t, a, r)
	won := wins(t, "a racing approval", race(12, a, b, func(i int, h elicitation.Store) error {
		_, err := h.Resolve(ctx, r.State.ID, vote(fmt.Sprintf("r%d@example.com", i), fmt.Sprint("s", i), "opt-2", time.Minute))
		return err
	}), elicitation.ErrConflict)
	st, _ := a.State(ctx, r.State.ID)
	if won != 2 || st.Status != elicitation.StatusSubmitted || len(st.Approvers) != 2 || st.DecidedBy != st.Approvers[1].By {
		t.Fatalf("%d approvals succeeded, state %+v; want exactly 2 and the second deciding", won, st)
	}
	tr, _ := b.Audit(ctx, r.State.ID)
	wantActions(t, tr, elicitation.ActionCreated, elicitation.ActionApproved, elicitation.ActionDecided)
}

// quorumReviewerRacingItself is testQuorum's case "one reviewer racing itself counts once".
func quorumReviewerRacingItself(t *testing.T, ctx context.Context, a, b elicitation.Store) {
	r := NewQuorum(t, 2)
	mustCreate(t, a, r)
	won := wins(t, "a repeated approval", race(8, a, b, func(i int, h elicitation.Store) error {
		_, err := h.Resolve(ctx, r.State.ID, vote("alice@example.com", fmt.Sprint("tab-", i), "opt-2", time.Minute))
		return err
	}), elicitation.ErrAlreadyApproved)
	st, _ := a.State(ctx, r.State.ID)
	if won != 1 || st.Status != elicitation.StatusPending || len(st.Approvers) != 1 {
		t.Fatalf("%d approvals by one reviewer succeeded, state %+v; want 1 and still pending", won, st)
	}
	b2, _ := json.Marshal(st.Approvers)
	t.Logf("approvers: %s", b2)
}
