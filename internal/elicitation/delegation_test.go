package elicitation_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/boltstore"
	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/testclock"
)

var (
	alice = elicitation.Identity{Issuer: "https://id.example.com/", Subject: "a1", Email: "alice@example.com", EmailVerified: true}
	bob   = elicitation.Identity{Issuer: "https://id.example.com/", Subject: "b1", Email: "bob@example.com", EmailVerified: true}
)

func delegationService(t *testing.T) (*elicitation.Service, *testclock.Clock, *boltstore.Store) {
	t.Helper()
	st, err := boltstore.Open(filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	c := testclock.New(time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC))
	return elicitation.NewService(elicitation.Config{Store: st, Now: c.Now, SignIn: true, Policy: elicitation.ReviewerPolicy{BarOwner: true}}), c, st
}

// TestDelegateBadInput: each bad delegation is a clear invalid-argument
// error naming its field, and nothing is written.
func TestDelegateBadInput(t *testing.T) {
	t.Parallel()
	svc, c, st := delegationService(t)
	ctx := context.Background()
	now := c.Now()
	unverified := alice
	unverified.EmailVerified = false
	for _, tc := range []struct {
		name  string
		id    elicitation.Identity
		in    elicitation.DelegationInput
		field string
		text  string
	}{
		{"to oneself", alice, elicitation.DelegationInput{To: "Alice@Example.com", Start: now, End: now.Add(time.Hour)}, "to", "yourself"},
		{"to nobody", alice, elicitation.DelegationInput{To: " ", Start: now, End: now.Add(time.Hour)}, "to", "e-mail address"},
		{"to a group", alice, elicitation.DelegationInput{To: "group:ops", Start: now, End: now.Add(time.Hour)}, "to", "not an e-mail address"},
		{"to no address", alice, elicitation.DelegationInput{To: "bob", Start: now, End: now.Add(time.Hour)}, "to", "not an e-mail address"},
		{"end before start", alice, elicitation.DelegationInput{To: "bob@example.com", Start: now.Add(2 * time.Hour), End: now.Add(time.Hour)}, "end", "end after it starts"},
		{"in the past", alice, elicitation.DelegationInput{To: "bob@example.com", Start: now.Add(-3 * time.Hour), End: now.Add(-time.Hour)}, "end", "in the past"},
		{"too long", alice, elicitation.DelegationInput{To: "bob@example.com", Start: now, End: now.Add(elicitation.MaxDelegationWindow + time.Hour)}, "end", "at most 90 days"},
		{"no end", alice, elicitation.DelegationInput{To: "bob@example.com"}, "end", "ends"},
		{"an unverified delegator", unverified, elicitation.DelegationInput{To: "bob@example.com", Start: now, End: now.Add(time.Hour)}, "from", "verified e-mail"},
	} {
		_, err := svc.Delegate(ctx, tc.id, tc.in)
		var e *elicitation.Error
		if !errors.As(err, &e) || e.Code != elicitation.CodeInvalidArgument || e.Field != tc.field || !strings.Contains(e.Message, tc.text) {
			t.Errorf("%s: %v (field %v), want %s: …%s…", tc.name, err, e, tc.field, tc.text)
		}
	}
	if l, err := st.ListDelegations(ctx, time.Time{}); err != nil || len(l) != 0 {
		t.Errorf("bad input wrote %v, %v", l, err)
	}
}

// TestDelegatedDecision: a request naming alice is bob's to decide while
// alice's delegation to him is active (in his inbox, on its keyless page,
// decided with "for alice" in the audit, decidedBy bob); not before the
// window, not after it, not once alice ends it; never a request alice
// could not decide herself (another reviewer's, her own agent's).
func TestDelegatedDecision(t *testing.T) {
	t.Parallel()
	svc, c, _ := delegationService(t)
	ctx := context.Background()
	mk := func(owner string, reviewers ...string) string {
		cr, err := svc.Create(ctx, owner, elicitation.KindApproval, elicitation.Input{Message: "m", Context: []byte(`1`), TimeoutSeconds: 86400, Reviewers: reviewers})
		if err != nil {
			t.Fatal(err)
		}
		return cr.State.ID
	}
	named := mk("agent", "alice@example.com")
	other := mk("agent", "carol@example.com")
	hers := mk("alice@example.com", "alice@example.com", "dave@example.com")
	asBob := elicitation.WithIdentity(ctx, bob)
	may := func(id string) error { _, err := svc.MayDecide(asBob, id, elicitation.NoKey); return err }
	if err := may(named); !errors.Is(err, elicitation.ErrNotFound) {
		t.Fatalf("before any delegation: %v", err)
	}
	now := c.Now()
	d, err := svc.Delegate(ctx, alice, elicitation.DelegationInput{To: "Bob@example.com", Start: now.Add(time.Hour), End: now.Add(3 * time.Hour)})
	if err != nil || d.To != "bob@example.com" || d.From != "alice@example.com" {
		t.Fatalf("Delegate: %+v, %v", d, err)
	}
	if err := may(named); err == nil {
		t.Error("bob may decide before the window")
	}
	c.Add(90 * time.Minute)
	if err := may(named); err != nil {
		t.Fatalf("in the window: %v", err)
	}
	for name, id := range map[string]string{"another reviewer's": other, "alice's own agent's": hers} {
		if err := may(id); err == nil {
			t.Errorf("bob may decide %s request through alice", name)
		}
	}
	l, err := svc.ReviewerInbox(ctx, bob, elicitation.InboxFilter{})
	if err != nil || l.All != 1 || l.Items[0].ID != named {
		t.Errorf("bob's inbox: %d, %v", l.All, err)
	}
	st, err := svc.Submit(asBob, named, elicitation.NoKey, elicitation.Submission{ID: "s1", Decision: elicitation.DecisionSubmitted})
	if err != nil || st.DecidedBy != "bob@example.com" {
		t.Fatalf("Submit: %+v, %v", st, err)
	}
	tr, err := svc.OperatorAudit(ctx, named)
	if err != nil {
		t.Fatal(err)
	}
	last := tr.Entries[len(tr.Entries)-1]
	if last.Action != elicitation.ActionDecided || last.Principal != "bob@example.com" || last.Detail != "submitted, for alice@example.com" {
		t.Errorf("decided entry %+v", last)
	}
	// Alice ends it; bob may no longer decide what names her.
	again := mk("agent", "alice@example.com")
	if err := may(again); err != nil {
		t.Fatalf("before the end: %v", err)
	}
	if _, err := svc.EndDelegation(ctx, bob, d.ID); !errors.Is(err, elicitation.ErrNotFound) {
		t.Errorf("bob ended alice's delegation: %v", err)
	}
	if _, err := svc.EndDelegation(ctx, alice, d.ID); err != nil {
		t.Fatal(err)
	}
	if err := may(again); err == nil {
		t.Error("bob may decide after alice ended the delegation")
	}
	// A new one, past its window.
	if _, err := svc.Delegate(ctx, alice, elicitation.DelegationInput{To: "bob@example.com", Start: c.Now(), End: c.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if err := may(again); err != nil {
		t.Fatalf("in the second window: %v", err)
	}
	c.Add(time.Hour)
	if err := may(again); err == nil {
		t.Error("bob may decide after the window")
	}
	if ds, err := svc.OperatorDelegations(ctx, true); err != nil || len(ds) != 2 {
		t.Errorf("operator listing: %d, %v", len(ds), err)
	}
}

// TestRoomFor: the two bounds a store applies to a new delegation, over
// those that have not ended at its creation: the delegator's own
// (MaxDelegationsFrom) and all reviewers' (MaxDelegations).
func TestRoomFor(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 5, 9, 0, 0, 0, time.UTC)
	of := func(n int, from func(i int) string, end time.Time) []elicitation.Delegation {
		ds := make([]elicitation.Delegation, n)
		for i := range ds {
			ds[i] = elicitation.Delegation{ID: fmt.Sprint(i), From: from(i), To: "bob@example.com", Start: now.Add(-time.Hour), End: end}
		}
		return ds
	}
	fromAlice := func(int) string { return "alice@example.com" }
	many := func(i int) string { return fmt.Sprintf("r%d@example.com", i/elicitation.MaxDelegationsFrom) }
	later, ended := now.Add(time.Hour), now
	tests := []struct {
		name string
		ds   []elicitation.Delegation
		want error
	}{
		{"none", nil, nil},
		{"the delegator one short", of(elicitation.MaxDelegationsFrom-1, fromAlice, later), nil},
		{"the delegator full", of(elicitation.MaxDelegationsFrom, fromAlice, later), elicitation.ErrTooManyDelegations},
		{"the delegator's ended ones do not count", of(elicitation.MaxDelegationsFrom, fromAlice, ended), nil},
		{"all one short", of(elicitation.MaxDelegations-1, many, later), nil},
		{"all full", of(elicitation.MaxDelegations, many, later), elicitation.ErrDelegationsFull},
		{"all ended do not count", of(elicitation.MaxDelegations, many, ended), nil},
	}
	for _, tt := range tests {
		d := elicitation.Delegation{ID: "new", From: "alice@example.com", To: "bob@example.com", Start: now, End: later, CreatedAt: now}
		if err := elicitation.RoomFor(tt.ds, d); !errors.Is(err, tt.want) || (err == nil) != (tt.want == nil) {
			t.Errorf("%s: RoomFor = %v, want %v", tt.name, err, tt.want)
		}
	}
}
