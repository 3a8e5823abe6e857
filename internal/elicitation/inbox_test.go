package elicitation_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/boltstore"
	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

func inboxService(t testing.TB, c *clock) (*elicitation.Service, *boltstore.Store) {
	t.Helper()
	st, err := boltstore.Open(filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return elicitation.NewService(elicitation.Config{Store: st, Now: c.Now, SignIn: true, Policy: elicitation.ReviewerPolicy{BarOwner: true}}), st
}

// TestReviewerInbox: a reviewer's inbox lists what they may decide (the
// one rule: named reviewers, groups, never their own request where the
// creator is barred), most urgent first, with a quorum's progress and
// whether their vote is in; it narrows by principal and kind; decided and
// expired requests leave it.
func TestReviewerInbox(t *testing.T) {
	ctx := context.Background()
	c := &clock{now: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)}
	svc, _ := inboxService(t, c)
	bob := elicitation.Identity{Subject: "b1", Email: "bob@example.com", EmailVerified: true, Groups: []string{"ops"}}
	approval := func(owner, msg string, timeout int, reviewers []string, approvals int) elicitation.Created {
		t.Helper()
		cr, err := svc.CreateApproval(ctx, owner, elicitation.ApprovalInput{Message: msg, Context: json.RawMessage(`1`), TimeoutSeconds: timeout, Reviewers: reviewers, Approvals: approvals})
		if err != nil {
			t.Fatal(err)
		}
		return cr
	}
	later := approval("deploy-bot", "Deploy api v1.3?\nreplicas: 3", 3600, nil, 0)
	urgent := approval("deploy-bot", "Rotate the key", 600, []string{"group:ops"}, 0)
	approval("deploy-bot", "Only carol", 300, []string{"carol@example.com"}, 0)
	approval("bob@example.com", "Bob's own", 120, nil, 0) // barred: bob created it
	quorum := approval("ci-bot", "Two of us", 1800, []string{"bob@example.com", "carol@example.com", "dave@example.com"}, 2)
	sel, err := svc.CreateSelection(ctx, "ci-bot", elicitation.SelectionInput{Message: "Pick a region", Options: []json.RawMessage{json.RawMessage(`{"id":"eu"}`), json.RawMessage(`{"id":"us"}`)}, TimeoutSeconds: 2400})
	if err != nil {
		t.Fatal(err)
	}
	ids := func(items []elicitation.InboxItem) []string {
		var out []string
		for _, it := range items {
			out = append(out, it.ID)
		}
		return out
	}
	items, err := svc.ReviewerInbox(ctx, bob, elicitation.InboxFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ids(items), []string{urgent.State.ID, quorum.State.ID, sel.State.ID, later.State.ID}; !slices.Equal(got, want) {
		t.Fatalf("bob's inbox %v, want %v", got, want)
	}
	if it := items[3]; it.Headline != "Deploy api v1.3?" || it.Owner != "deploy-bot" || it.Left != time.Hour || it.Kind != elicitation.KindApproval {
		t.Errorf("row %+v", it)
	}
	// Carol votes on the quorum: bob sees "1 of 2, yours missing".
	carol := elicitation.Identity{Subject: "c1", Email: "carol@example.com", EmailVerified: true}
	if _, err := svc.Submit(elicitation.WithIdentity(ctx, carol), quorum.State.ID, quorum.ReviewKey, elicitation.Submission{ID: "s1", Decision: elicitation.DecisionSubmitted}); err != nil {
		t.Fatal(err)
	}
	items, _ = svc.ReviewerInbox(ctx, bob, elicitation.InboxFilter{Owner: "ci-bot", Kind: elicitation.KindApproval})
	if len(items) != 1 || items[0].ID != quorum.State.ID || items[0].Votes != 1 || items[0].Voted || items[0].Approvals != 2 {
		t.Fatalf("filtered inbox %+v", items)
	}
	if carols, _ := svc.ReviewerInbox(ctx, carol, elicitation.InboxFilter{Owner: "ci-bot", Kind: elicitation.KindApproval}); len(carols) != 1 || !carols[0].Voted {
		t.Errorf("carol's inbox %+v: her vote is in", carols)
	}
	// Decided and expired leave.
	if _, err := svc.Submit(elicitation.WithIdentity(ctx, bob), urgent.State.ID, urgent.ReviewKey, elicitation.Submission{ID: "s2", Decision: elicitation.DecisionDeclined}); err != nil {
		t.Fatal(err)
	}
	c.Add(35 * time.Minute)
	items, _ = svc.ReviewerInbox(ctx, bob, elicitation.InboxFilter{})
	if got, want := ids(items), []string{sel.State.ID, later.State.ID}; !slices.Equal(got, want) {
		t.Errorf("after a decision and 35 minutes: %v, want %v", got, want)
	}
	// Without sign-in there is nobody to list for.
	plain := elicitation.NewService(elicitation.Config{Store: nil})
	if _, err := plain.ReviewerInbox(ctx, bob, elicitation.InboxFilter{}); elicitation.CodeOf(err) != elicitation.CodeInvalidArgument {
		t.Errorf("without sign-in: %v", err)
	}
}

// BenchmarkReviewerInbox lists a reviewer's inbox among 10,000 pending
// requests (a tenth of them for another reviewer), the listing the
// inbox page renders from.
func BenchmarkReviewerInbox(b *testing.B) {
	ctx := context.Background()
	c := &clock{now: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)}
	svc, _ := inboxService(b, c)
	for i := range 10000 {
		var reviewers []string
		if i%10 == 0 {
			reviewers = []string{"carol@example.com"}
		}
		if _, err := svc.CreateApproval(ctx, fmt.Sprintf("bot-%d", i%7), elicitation.ApprovalInput{Message: fmt.Sprintf("Request %d\nmore", i), Context: json.RawMessage(`1`), TimeoutSeconds: 600 + i, Reviewers: reviewers}); err != nil {
			b.Fatal(err)
		}
	}
	bob := elicitation.Identity{Subject: "b1", Email: "bob@example.com", EmailVerified: true}
	b.ResetTimer()
	for b.Loop() {
		items, err := svc.ReviewerInbox(ctx, bob, elicitation.InboxFilter{})
		if err != nil || len(items) != 9000 {
			b.Fatalf("%d items, %v", len(items), err)
		}
	}
}
