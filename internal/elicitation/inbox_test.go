package elicitation_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/boltstore"
	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/testclock"
)

func inboxService(t testing.TB, c *testclock.Clock) (*elicitation.Service, *boltstore.Store) {
	t.Helper()
	st, err := boltstore.Open(filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return elicitation.NewService(elicitation.Config{Store: st, Now: c.Now, SignIn: true, Policy: elicitation.ReviewerPolicy{BarOwner: true}}), st
}

// itemIDs are the ids of an inbox's rows, in order.
func itemIDs(items []elicitation.InboxItem) []string {
	var out []string
	for _, it := range items {
		out = append(out, it.ID)
	}
	return out
}

// TestReviewerInbox: a reviewer's inbox lists what they may decide (the
// one rule: named reviewers, groups, never their own request where the
// creator is barred), most urgent first, with a quorum's progress and
// whether their vote is in; it narrows by principal and kind; decided and
// expired requests leave it.
func TestReviewerInbox(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := testclock.New(time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC))
	svc, _ := inboxService(t, c)
	bob := elicitation.Identity{Subject: "b1", Email: "bob@example.com", EmailVerified: true, Groups: []string{"ops"}}
	approval := func(owner, msg string, timeout int, reviewers []string, approvals int) elicitation.Created {
		t.Helper()
		cr, err := svc.Create(ctx, owner, elicitation.KindApproval, elicitation.Input{Message: msg, Context: json.RawMessage(`1`), TimeoutSeconds: timeout, Reviewers: reviewers, Approvals: approvals})
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
	sel, err := svc.Create(ctx, "ci-bot", elicitation.KindSelection, elicitation.Input{Message: "Pick a region", Options: []json.RawMessage{json.RawMessage(`{"id":"eu"}`), json.RawMessage(`{"id":"us"}`)}, TimeoutSeconds: 2400})
	if err != nil {
		t.Fatal(err)
	}
	l, err := svc.ReviewerInbox(ctx, bob, elicitation.InboxFilter{})
	if err != nil {
		t.Fatal(err)
	}
	items := l.Items
	if l.Total != 4 || l.All != 4 || !slices.Equal(l.Owners, []string{"ci-bot", "deploy-bot"}) {
		t.Errorf("listing: total %d, all %d, owners %v", l.Total, l.All, l.Owners)
	}
	if l, _ := svc.ReviewerInbox(ctx, bob, elicitation.InboxFilter{Limit: 2}); len(l.Items) != 2 || l.Total != 4 || l.Items[1].ID != quorum.State.ID {
		t.Errorf("limited to 2: %d items of %d", len(l.Items), l.Total)
	}
	if got, want := itemIDs(items), []string{urgent.State.ID, quorum.State.ID, sel.State.ID, later.State.ID}; !slices.Equal(got, want) {
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
	l, _ = svc.ReviewerInbox(ctx, bob, elicitation.InboxFilter{Owner: "ci-bot", Kind: elicitation.KindApproval})
	items = l.Items
	if l.Total != 1 || l.All != 4 || len(l.Owners) != 2 {
		t.Errorf("filtered listing: total %d, all %d, owners %v", l.Total, l.All, l.Owners)
	}
	if len(items) != 1 || items[0].ID != quorum.State.ID || items[0].Votes != 1 || items[0].Voted || items[0].Approvals != 2 {
		t.Fatalf("filtered inbox %+v", items)
	}
	if carols, _ := svc.ReviewerInbox(ctx, carol, elicitation.InboxFilter{Owner: "ci-bot", Kind: elicitation.KindApproval}); len(carols.Items) != 1 || !carols.Items[0].Voted {
		t.Errorf("carol's inbox %+v: her vote is in", carols)
	}
	// Decided and expired leave.
	if _, err := svc.Submit(elicitation.WithIdentity(ctx, bob), urgent.State.ID, urgent.ReviewKey, elicitation.Submission{ID: "s2", Decision: elicitation.DecisionDeclined}); err != nil {
		t.Fatal(err)
	}
	c.Add(35 * time.Minute)
	l, _ = svc.ReviewerInbox(ctx, bob, elicitation.InboxFilter{})
	if got, want := itemIDs(l.Items), []string{sel.State.ID, later.State.ID}; !slices.Equal(got, want) {
		t.Errorf("after a decision and 35 minutes: %v, want %v", got, want)
	}
	// Without sign-in there is nobody to list for.
	plain := elicitation.NewService(elicitation.Config{Store: nil})
	if _, err := plain.ReviewerInbox(ctx, bob, elicitation.InboxFilter{}); elicitation.CodeOf(err) != elicitation.CodeInvalidArgument {
		t.Errorf("without sign-in: %v", err)
	}
}

// TestReviewerInboxPages: an inbox pages by cursor in one order (earliest
// expiry first, the id between rows that expire at the same instant): the
// pages together are the whole listing, each row once; a page after
// decisions starts at the first row still past the cursor, even when the
// cursor's own row was decided; a filter pages within itself; past the
// end there is nothing and no next page.
func TestReviewerInboxPages(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := testclock.New(time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC))
	svc, _ := inboxService(t, c)
	bob := elicitation.Identity{Subject: "b1", Email: "bob@example.com", EmailVerified: true}
	keys := map[string]string{}
	for i, timeout := range []int{600, 600, 600, 900, 900, 1200, 1500, 1500, 1800} {
		cr, err := svc.Create(ctx, []string{"a-bot", "b-bot"}[i%2], elicitation.KindApproval, elicitation.Input{Message: fmt.Sprint("Request ", i), Context: json.RawMessage(`1`), TimeoutSeconds: timeout})
		if err != nil {
			t.Fatal(err)
		}
		keys[cr.State.ID] = cr.ReviewKey
	}
	list := func(f elicitation.InboxFilter) elicitation.InboxListing {
		t.Helper()
		l, err := svc.ReviewerInbox(ctx, bob, f)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	walk := func(f elicitation.InboxFilter) (got []string, skipped []int) {
		t.Helper()
		for range 20 {
			l := list(f)
			got, skipped = append(got, itemIDs(l.Items)...), append(skipped, l.Skipped)
			if l.Next.IsZero() {
				return got, skipped
			}
			f.After = l.Next
		}
		t.Fatalf("no end after 20 pages: %v", got)
		return nil, nil
	}
	whole := list(elicitation.InboxFilter{Limit: 100})
	if len(whole.Items) != 9 || !whole.Next.IsZero() || whole.Skipped != 0 {
		t.Fatalf("whole listing: %d items, next %v, skipped %d", len(whole.Items), whole.Next, whole.Skipped)
	}
	if !slices.IsSortedFunc(whole.Items, func(a, b elicitation.InboxItem) int { return a.Cursor().Compare(b.Cursor()) }) {
		t.Errorf("whole listing not in cursor order: %v", itemIDs(whole.Items))
	}
	if got, skipped := walk(elicitation.InboxFilter{Limit: 2}); !slices.Equal(got, itemIDs(whole.Items)) || !slices.Equal(skipped, []int{0, 2, 4, 6, 8}) {
		t.Errorf("pages of 2: %v skipping %v, want %v", got, skipped, itemIDs(whole.Items))
	}
	var aBots []string
	for _, it := range whole.Items {
		if it.Owner == "a-bot" {
			aBots = append(aBots, it.ID)
		}
	}
	if got, _ := walk(elicitation.InboxFilter{Owner: "a-bot", Limit: 2}); !slices.Equal(got, aBots) {
		t.Errorf("a-bot's pages %v, want %v", got, aBots)
	}
	// Backwards from the last page of 2: the pages Prev leads to are the
	// whole listing again, each row once, the first of them short.
	var back [][]string
	for f := (elicitation.InboxFilter{Limit: 2, After: whole.Items[6].Cursor()}); ; {
		l := list(f)
		back = slices.Insert(back, 0, itemIDs(l.Items))
		if l.Prev.IsZero() || len(back) > 10 {
			break
		}
		f = elicitation.InboxFilter{Limit: 2, Before: l.Prev}
	}
	if got := slices.Concat(back...); !slices.Equal(got, itemIDs(whole.Items)) || len(back[0]) != 1 {
		t.Errorf("pages back from the last: %v, want %v, the first of one row", back, itemIDs(whole.Items))
	}
	// The first page's last row and the row after it are decided before
	// the second page is read.
	first := list(elicitation.InboxFilter{Limit: 3})
	if first.Next != whole.Items[2].Cursor() {
		t.Fatalf("first page's next %v, want its last row's cursor", first.Next)
	}
	for i, it := range whole.Items[2:4] {
		if _, err := svc.Submit(elicitation.WithIdentity(ctx, bob), it.ID, keys[it.ID], elicitation.Submission{ID: fmt.Sprint("s", i), Decision: elicitation.DecisionSubmitted}); err != nil {
			t.Fatal(err)
		}
	}
	second := list(elicitation.InboxFilter{Limit: 3, After: first.Next})
	if got, want := itemIDs(second.Items), itemIDs(whole.Items[4:7]); !slices.Equal(got, want) || second.Skipped != 2 || second.Total != 7 || second.Next != whole.Items[6].Cursor() {
		t.Errorf("second page after two decisions: %v skipping %d of %d, want %v skipping 2 of 7", got, second.Skipped, second.Total, want)
	}
	if back := list(elicitation.InboxFilter{Limit: 3, Before: whole.Items[4].Cursor()}); !slices.Equal(itemIDs(back.Items), itemIDs(whole.Items[:2])) || !back.Prev.IsZero() || back.Next != whole.Items[1].Cursor() {
		t.Errorf("the page before the second after two decisions: %v, prev %v, next %v; want the first two rows", itemIDs(back.Items), back.Prev, back.Next)
	}
	// A page before a place no pending row comes before any more is the
	// first page.
	if first := list(elicitation.InboxFilter{Limit: 2, Before: whole.Items[0].Cursor()}); !slices.Equal(itemIDs(first.Items), itemIDs(whole.Items[:2])) || !first.Prev.IsZero() || first.Next != whole.Items[1].Cursor() {
		t.Errorf("the page before the first row: %v, prev %v, next %v; want the first page", itemIDs(first.Items), first.Prev, first.Next)
	}
	end := list(elicitation.InboxFilter{After: whole.Items[8].Cursor()})
	if len(end.Items) != 0 || !end.Next.IsZero() || end.Skipped != end.Total || end.Total != 7 {
		t.Errorf("past the end: %d items, next %v, skipped %d of %d", len(end.Items), end.Next, end.Skipped, end.Total)
	}
}

// BenchmarkReviewerInbox lists a reviewer's inbox among 10,000 pending
// requests (a tenth of them for another reviewer), the listing the
// inbox page renders from.
func BenchmarkReviewerInbox(b *testing.B) {
	ctx := context.Background()
	c := testclock.New(time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC))
	svc, _ := inboxService(b, c)
	for i := range 10000 {
		var reviewers []string
		if i%10 == 0 {
			reviewers = []string{"carol@example.com"}
		}
		if _, err := svc.Create(ctx, fmt.Sprintf("bot-%d", i%7), elicitation.KindApproval, elicitation.Input{Message: fmt.Sprintf("Request %d\nmore", i), Context: json.RawMessage(`1`), TimeoutSeconds: 600 + i, Reviewers: reviewers}); err != nil {
			b.Fatal(err)
		}
	}
	bob := elicitation.Identity{Subject: "b1", Email: "bob@example.com", EmailVerified: true}
	b.ResetTimer()
	for b.Loop() {
		l, err := svc.ReviewerInbox(ctx, bob, elicitation.InboxFilter{})
		if err != nil || l.Total != 9000 || len(l.Items) != elicitation.DefaultInboxRows {
			b.Fatalf("%d items of %d, %v", len(l.Items), l.Total, err)
		}
	}
}

// TestNoKeyOpensForMayDecide: without the review key (NoKey, the inbox's
// link) a request opens, renders and takes a decision only for a signed-in
// reviewer who may decide it; to anyone else, and on a server without
// sign-in, it does not exist, and nothing is added to its audit trail.
func TestNoKeyOpensForMayDecide(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := testclock.New(time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC))
	svc, st := inboxService(t, c)
	cr, err := svc.Create(ctx, "bob@example.com", elicitation.KindApproval, elicitation.Input{Message: "Ship?", Context: json.RawMessage(`1`), TimeoutSeconds: 600, Reviewers: []string{"bob@example.com", "group:ops"}})
	if err != nil {
		t.Fatal(err)
	}
	id := cr.State.ID
	bob := elicitation.Identity{Subject: "b1", Email: "bob@example.com", EmailVerified: true, Groups: []string{"ops"}}
	eve := elicitation.Identity{Subject: "e1", Email: "eve@example.com", EmailVerified: true}
	ann := elicitation.Identity{Subject: "a1", Email: "ann@example.com", EmailVerified: true, Groups: []string{"ops"}}
	for _, tc := range []struct {
		name string
		ctx  context.Context
	}{
		{"not signed in", ctx},
		{"not a reviewer", elicitation.WithIdentity(ctx, eve)},
		{"the barred creator", elicitation.WithIdentity(ctx, bob)},
	} {
		if _, err := svc.OpenReview(tc.ctx, id, elicitation.NoKey); !errors.Is(err, elicitation.ErrNotFound) {
			t.Errorf("%s: OpenReview without the key: %v, want not found", tc.name, err)
		}
		if _, err := svc.Submit(tc.ctx, id, elicitation.NoKey, elicitation.Submission{ID: "s0", Decision: elicitation.DecisionSubmitted}); !errors.Is(err, elicitation.ErrNotFound) {
			t.Errorf("%s: Submit without the key: %v, want not found", tc.name, err)
		}
		if err := svc.RefuseSubmission(tc.ctx, id, elicitation.NoKey, "x", "test"); !errors.Is(err, elicitation.ErrNotFound) {
			t.Errorf("%s: RefuseSubmission without the key: %v, want not found", tc.name, err)
		}
	}
	if tr, _ := svc.OperatorAudit(ctx, id); len(tr.Entries) != 1 {
		t.Fatalf("audit after refused keyless opens: %+v, want the creation only", tr.Entries)
	}
	actx := elicitation.WithIdentity(ctx, ann)
	if rv, err := svc.OpenReview(actx, id, elicitation.NoKey); err != nil || rv.Reviewer != "ann@example.com" {
		t.Fatalf("ann (group ops) without the key: %+v, %v", rv.Reviewer, err)
	}
	if got, err := svc.Submit(actx, id, elicitation.NoKey, elicitation.Submission{ID: "s1", Decision: elicitation.DecisionSubmitted}); err != nil || got.Status != elicitation.StatusSubmitted || got.DecidedBy != "ann@example.com" {
		t.Fatalf("ann's decision without the key: %+v, %v", got, err)
	}
	// A server without sign-in: the same request, no key, not found even
	// with an identity in the context.
	plain := elicitation.NewService(elicitation.Config{Store: st, Now: c.Now})
	if _, err := plain.OpenReview(actx, id, elicitation.NoKey); !errors.Is(err, elicitation.ErrNotFound) {
		t.Errorf("without sign-in: %v, want not found", err)
	}
}
