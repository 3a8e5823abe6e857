package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// testPendingCap: a create past its owner's MaxPending is refused with
// ErrTooManyPending and writes nothing, through either handle and when
// creates race; other owners are not held back; a resolution makes room,
// and so does an expiry, without any write; a vote short of its quorum
// does not.
func testPendingCap(t *testing.T, open Factory) {
	a, b := open(t)
	ctx := ctxT(t)
	const capped = 3
	owned := func(owner string, after, ttl time.Duration) elicitation.Request {
		r := NewApproval(t, ttl)
		r.State.Owner = owner
		r.State.CreatedAt = T0.Add(after)
		r.State.ExpiresAt = r.State.CreatedAt.Add(ttl)
		r.State.RetainUntil = r.State.ExpiresAt.Add(time.Hour)
		r.MaxPending = capped
		return r
	}
	create := func(h elicitation.Store, r elicitation.Request) error { return h.Create(ctx, r, created(r)) }
	refused := func(what string, h elicitation.Store, r elicitation.Request) {
		t.Helper()
		if err := create(h, r); !errors.Is(err, elicitation.ErrTooManyPending) || !errors.Is(err, elicitation.ErrBusy) {
			t.Fatalf("%s: Create past the bound: %v, want ErrTooManyPending (an ErrBusy)", what, err)
		}
		if _, err := b.State(ctx, r.State.ID); !errors.Is(err, elicitation.ErrNotFound) {
			t.Fatalf("%s: the refused request was written: State says %v", what, err)
		}
	}

	short := owned("mallory", 0, time.Minute)
	long := owned("mallory", 0, time.Hour)
	quorum := owned("mallory", 0, time.Hour)
	quorum.State.Approvals = 2
	for i, r := range []elicitation.Request{short, long, quorum} {
		if err := create([]elicitation.Store{a, b}[i%2], r); err != nil {
			t.Fatalf("Create %d of %d: %v", i+1, capped, err)
		}
	}
	refused("at the bound", b, owned("mallory", time.Second, time.Hour))
	if err := create(a, owned("alice", time.Second, time.Hour)); err != nil {
		t.Fatalf("another owner's Create: %v", err)
	}

	vote := elicitation.Resolution{Status: elicitation.StatusSubmitted, SubmissionID: "s1", At: T0.Add(2 * time.Second), By: "r1", Answer: &elicitation.Answer{Form: []byte(`{"reason":"x"}`)}}
	if _, err := a.Resolve(ctx, quorum.State.ID, vote); err != nil {
		t.Fatalf("a vote: %v", err)
	}
	refused("after a vote short of the quorum", a, owned("mallory", 3*time.Second, time.Hour))

	if _, err := b.Resolve(ctx, long.State.ID, elicitation.Resolution{Status: elicitation.StatusCanceled, At: T0.Add(4 * time.Second), By: "mallory"}); err != nil {
		t.Fatalf("cancel: %v", err)
	}
	if err := create(a, owned("mallory", 5*time.Second, time.Hour)); err != nil {
		t.Fatalf("Create after a cancel made room: %v", err)
	}
	refused("full again", b, owned("mallory", 6*time.Second, time.Hour))

	// short expires at T0+1m; nothing is written when it does.
	if err := create(b, owned("mallory", 2*time.Minute, time.Hour)); err != nil {
		t.Fatalf("Create after an expiry made room: %v", err)
	}
	refused("full after the expiry's room is taken", a, owned("mallory", 2*time.Minute+time.Second, time.Hour))

	// Creates that race for the last places: exactly the bound land.
	at := time.Hour
	errs := race(8, a, b, func(_ int, h elicitation.Store) error { return create(h, owned("eve", at, time.Hour)) })
	if landed := wins(t, "a racing Create", errs, elicitation.ErrTooManyPending); landed != capped {
		t.Errorf("%d of 8 racing creates landed, want %d", landed, capped)
	}
}
