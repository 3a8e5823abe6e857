package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/testenv"
)

// testDelegations: a delegation put through one handle is listed through
// the other, by start then id, from the time given; an id is used once;
// a delegator has at most MaxDelegationsFrom that have not ended (the one
// past it is refused and nothing is written; ended ones do not count);
// only the delegator ends one, once, and it is then listed only with the
// zero time, its end and EndedAt the ending's time.
func testDelegations(t *testing.T, open Factory) {
	a, b := open(t)
	ctx := ctxT(t)
	at := func(h int) time.Time { return T0.Add(time.Duration(h) * time.Hour) }
	dl := func(id, from string, start, end int) elicitation.Delegation {
		return elicitation.Delegation{ID: id, From: from, To: "bob@example.com", Start: at(start), End: at(end), CreatedAt: T0}
	}
	if l, err := b.ListDelegations(ctx, T0); err != nil || len(l) != 0 {
		t.Fatalf("empty store lists %v, %v", l, err)
	}
	must(t, a.PutDelegation(ctx, dl("d2", "alice@example.com", 2, 10)))
	must(t, a.PutDelegation(ctx, dl("d1", "alice@example.com", 1, 5)))
	must(t, b.PutDelegation(ctx, dl("d0", "carol@example.com", 2, 3)))
	wantErr(t, "the same id again", a.PutDelegation(ctx, dl("d1", "dave@example.com", 1, 2)), elicitation.ErrConflict)
	listed := func(h elicitation.Store, after time.Time) []string {
		t.Helper()
		l, err := h.ListDelegations(ctx, after)
		must(t, err)
		var ids []string
		for _, d := range l {
			ids = append(ids, d.ID)
		}
		return ids
	}
	if got := fmt.Sprint(listed(b, T0)); got != "[d1 d0 d2]" {
		t.Errorf("listed %s, want [d1 d0 d2] (by start, then id)", got)
	}
	if got := fmt.Sprint(listed(a, at(4))); got != "[d1 d2]" {
		t.Errorf("listed after 4h %s, want [d1 d2] (those that end after it)", got)
	}
	l, err := a.ListDelegations(ctx, T0)
	must(t, err)
	if want := dl("d1", "alice@example.com", 1, 5); !sameDelegation(l[0], want) {
		t.Errorf("read back %+v, want %+v", l[0], want)
	}

	// The bound: alice has 2 not ended; 8 more fit, the next does not.
	for i := range elicitation.MaxDelegationsFrom - 2 {
		must(t, a.PutDelegation(ctx, dl(fmt.Sprintf("m%02d", i), "alice@example.com", 1, 20)))
	}
	wantErr(t, "one past the bound", b.PutDelegation(ctx, dl("over", "alice@example.com", 1, 20)), elicitation.ErrTooManyDelegations)
	if got := listed(a, time.Time{}); len(got) != elicitation.MaxDelegationsFrom+1 {
		t.Errorf("after the refused put %d are kept, want %d", len(got), elicitation.MaxDelegationsFrom+1)
	}
	must(t, a.PutDelegation(ctx, dl("other", "dave@example.com", 1, 20))) // another delegator's count

	// Ending.
	_, err = b.EndDelegation(ctx, "carol@example.com", "d1", at(1))
	wantErr(t, "ended by another", err, elicitation.ErrNotFound)
	_, err = b.EndDelegation(ctx, "alice@example.com", "nope", at(1))
	wantErr(t, "unknown id", err, elicitation.ErrNotFound)
	ended, err := b.EndDelegation(ctx, "alice@example.com", "d1", at(2))
	must(t, err)
	if !ended.End.Equal(at(2)) || !ended.EndedAt.Equal(at(2)) {
		t.Errorf("ended %+v, want end and endedAt at 2h", ended)
	}
	_, err = a.EndDelegation(ctx, "alice@example.com", "d1", at(3))
	wantErr(t, "ended twice", err, elicitation.ErrConflict)
	for _, id := range listed(a, at(2)) {
		if id == "d1" {
			t.Error("an ended delegation is listed as not ended")
		}
	}
	l, err = b.ListDelegations(ctx, time.Time{})
	must(t, err)
	found := false
	for _, d := range l {
		if d.ID == "d1" {
			found = d.EndedAt.Equal(at(2)) && d.End.Equal(at(2))
		}
	}
	if !found {
		t.Error("the ended delegation is not listed with the zero time, or without its end")
	}
	// Ended at 2h, it no longer counts at 3h: alice may add one more.
	over := dl("again", "alice@example.com", 3, 20)
	over.CreatedAt = at(3)
	must(t, a.PutDelegation(ctx, over))
	testDelegationRoom(t, a, b)
}

// testDelegationRoom: a delegator two short of MaxDelegationsFrom who puts
// many at once through both handles gets exactly two more; the rest are
// refused with ErrTooManyDelegations and not stored.
func testDelegationRoom(t *testing.T, a, b elicitation.Store) {
	ctx := ctxT(t)
	const from = "erin@example.com"
	dl := func(id string) elicitation.Delegation {
		return elicitation.Delegation{ID: id, From: from, To: "bob@example.com", Start: T0, End: T0.Add(time.Hour), CreatedAt: T0}
	}
	for i := range elicitation.MaxDelegationsFrom - 2 {
		must(t, a.PutDelegation(ctx, dl(fmt.Sprintf("e%02d", i))))
	}
	won := wins(t, "PutDelegation", race(8, a, b, func(i int, h elicitation.Store) error {
		return h.PutDelegation(ctx, dl(fmt.Sprintf("race%d", i)))
	}), elicitation.ErrTooManyDelegations)
	l, err := b.ListDelegations(ctx, T0)
	must(t, err)
	kept := 0
	for _, d := range l {
		if d.From == from {
			kept++
		}
	}
	if won != 2 || kept != elicitation.MaxDelegationsFrom {
		t.Errorf("%d concurrent puts landed and %d are kept, for a delegator two short of %d; want 2 and %d", won, kept, elicitation.MaxDelegationsFrom, elicitation.MaxDelegationsFrom)
	}
}

// testDelegationsFull: once all reviewers have MaxDelegations that have
// not ended, one more from a delegator with room of their own is refused
// with ErrDelegationsFull and not stored, and the listing holds every
// one; an ended one makes room again.
func testDelegationsFull(t *testing.T, open Factory) {
	testenv.Slow(t, "store contract's thousand delegations")
	a, b := open(t)
	// A thousand puts, each counting the ones before it (on DynamoDB Local
	// half a minute, more under -race and load): the work is bounded, the
	// minute of ctxT is not enough.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	dl := func(id, from string) elicitation.Delegation {
		return elicitation.Delegation{ID: id, From: from, To: "bob@example.com", Start: T0, End: T0.Add(time.Hour), CreatedAt: T0}
	}
	for i := range elicitation.MaxDelegations {
		h := a
		if i%2 == 1 {
			h = b
		}
		from := fmt.Sprintf("r%03d@example.com", i/elicitation.MaxDelegationsFrom)
		must(t, h.PutDelegation(ctx, dl(fmt.Sprintf("f%04d", i), from)))
	}
	wantErr(t, "one past the bound of all", b.PutDelegation(ctx, dl("over", "newcomer@example.com")), elicitation.ErrDelegationsFull)
	l, err := a.ListDelegations(ctx, T0)
	must(t, err)
	if len(l) != elicitation.MaxDelegations || l[len(l)-1].ID != fmt.Sprintf("f%04d", elicitation.MaxDelegations-1) {
		t.Fatalf("listed %d, want every one of %d", len(l), elicitation.MaxDelegations)
	}
	_, err = a.EndDelegation(ctx, "r000@example.com", "f0000", T0.Add(time.Minute))
	must(t, err)
	late := dl("late", "newcomer@example.com")
	late.CreatedAt = T0.Add(2 * time.Minute)
	must(t, b.PutDelegation(ctx, late))
}

func sameDelegation(a, b elicitation.Delegation) bool {
	return a.ID == b.ID && a.From == b.From && a.To == b.To && a.Start.Equal(b.Start) && a.End.Equal(b.End) && a.CreatedAt.Equal(b.CreatedAt) && a.EndedAt.Equal(b.EndedAt)
}
