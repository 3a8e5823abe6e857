package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// testInbox: the index of pending requests lists each pending one once,
// earliest expiry first, with its headline, reviewers and a quorum's votes
// as they land; a decision or a cancel takes a request out in the write
// that lands it; an expired one is not listed, and Cleanup removes it.
func testInbox(t *testing.T, open Factory) {
	ctx := ctxT(t)
	a, b := open(t)
	late := NewApproval(t, 3*time.Hour)
	late.Payload.Message = "  Deploy api v1.3?\nreplicas: 3"
	late.Payload.Reviewers = []string{"bob@example.com", "group:ops"}
	soon := NewSelection(t, 3, time.Hour)
	quorum := NewQuorum(t, 2)
	quorum.State.ExpiresAt = T0.Add(2 * time.Hour)
	short := NewSelection(t, 2, time.Minute)
	for _, r := range []elicitation.Request{late, soon, quorum, short} {
		mustCreate(t, a, r)
	}
	list := func(what string, at time.Time, want ...elicitation.Request) []elicitation.InboxEntry {
		t.Helper()
		return listPending(t, b, what, at, want...)
	}
	got := list("at creation", T0, short, soon, quorum, late)
	if len(got) == 4 {
		checkEntries(t, got[3], got[2], late)
	}
	if got, err := b.PendingEntries(ctx, T0, 2); err != nil || len(got) != 2 {
		t.Errorf("limit 2: %d entries, %v", len(got), err)
	}
	// A vote stays listed, with the vote; the decision and a cancel leave.
	mustResolve(ctx, t, a, quorum.State.ID, vote("bob@example.com", "s1", "opt-1", time.Minute))
	got = list("after a vote", T0.Add(2*time.Minute), soon, quorum, late)
	if len(got) == 3 && (len(got[1].Approvers) != 1 || got[1].Approvers[0].By != "bob@example.com") {
		t.Errorf("after a vote, the quorum's entry has approvers %+v", got[1].Approvers)
	}
	mustResolve(ctx, t, b, quorum.State.ID, vote("carol@example.com", "s2", "opt-1", 3*time.Minute))
	mustResolve(ctx, t, a, soon.State.ID, elicitation.Resolution{Status: elicitation.StatusCanceled, At: T0.Add(4 * time.Minute), By: "alice"})
	list("after the quorum and a cancel", T0.Add(5*time.Minute), late)
	list("past every expiry", T0.Add(4*time.Hour))
	if _, err := a.Cleanup(ctx, T0.Add(30*24*time.Hour)); err != nil {
		t.Fatal(err)
	}
	list("after cleanup, at the start", T0)
}

// listPending lists s's index at at and checks it holds want, in order.
func listPending(t *testing.T, s elicitation.Store, what string, at time.Time, want ...elicitation.Request) []elicitation.InboxEntry {
	t.Helper()
	got, err := s.PendingEntries(ctxT(t), at, 100)
	if err != nil {
		t.Fatalf("%s: PendingEntries: %v", what, err)
	}
	var ids, wantIDs []string
	for _, e := range got {
		ids = append(ids, e.ID)
	}
	for _, r := range want {
		wantIDs = append(wantIDs, r.State.ID)
	}
	if !slices.Equal(ids, wantIDs) {
		t.Errorf("%s: listed %v, want %v (earliest expiry first)", what, ids, wantIDs)
	}
	return got
}

// checkEntries checks an entry read back whole (e, of late) and a
// quorum's before any vote (q).
func checkEntries(t *testing.T, e, q elicitation.InboxEntry, late elicitation.Request) {
	t.Helper()
	if e.Headline != "Deploy api v1.3?" || e.Kind != elicitation.KindApproval || e.Owner != "alice" || !slices.Equal(e.Reviewers, late.Payload.Reviewers) ||
		!e.ExpiresAt.Equal(late.State.ExpiresAt) || !e.CreatedAt.Equal(T0) {
		t.Errorf("entry read back as %+v", e)
	}
	if q.Approvals != 2 || len(q.Approvers) != 0 {
		t.Errorf("quorum entry read back as %+v", q)
	}
}
