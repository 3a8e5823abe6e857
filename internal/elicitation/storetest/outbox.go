package storetest

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// withOutbox adds to r the deliveries a Service would: a created notice to
// each target (with the link) and an expiry notice scheduled at ExpiresAt.
func withOutbox(r elicitation.Request, targets ...string) elicitation.Request {
	r.Payload.Notify = targets
	for _, tg := range targets {
		c := elicitation.NewDelivery(r.State, elicitation.EventCreated, tg, r.State.CreatedAt, r.State.CreatedAt)
		c.Link = "https://review.example/review/" + r.State.ID + "/key"
		r.Outbox = append(r.Outbox, c,
			elicitation.NewDelivery(r.State, elicitation.EventExpired, tg, r.State.ExpiresAt, r.State.ExpiresAt))
	}
	return r
}

func dueIDs(t *testing.T, s elicitation.Store, now time.Time) []string {
	t.Helper()
	ds, err := s.DueDeliveries(ctxT(t), now, 100)
	if err != nil {
		t.Fatalf("DueDeliveries(%v): %v", now, err)
	}
	ids := make([]string, len(ds))
	for i, d := range ds {
		ids[i] = d.ID
		if i > 0 && d.NextAt().Before(ds[i-1].NextAt()) {
			t.Errorf("DueDeliveries(%v): not earliest first: %v before %v", now, ds[i-1].NextAt(), d.NextAt())
		}
	}
	return ids
}

func wantDue(t *testing.T, what string, s elicitation.Store, now time.Time, want ...string) {
	t.Helper()
	got := dueIDs(t, s, now)
	slices.Sort(got)
	want = slices.Sorted(slices.Values(want))
	if !slices.Equal(got, want) {
		t.Errorf("%s: due deliveries = %v, want %v", what, got, want)
	}
}

func id(r elicitation.Request, ev elicitation.Event, target string) string {
	return elicitation.DeliveryID(r.State.ID, ev, target)
}

func delivery(t *testing.T, r elicitation.Request, ev elicitation.Event, target string) elicitation.Delivery {
	t.Helper()
	for _, d := range r.Outbox {
		if d.Event == ev && d.Target == target {
			return d
		}
	}
	t.Fatalf("no %s delivery to %s", ev, target)
	return elicitation.Delivery{}
}

// testOutbox: deliveries written by Create are due at their time, read
// back whole through another handle, and removed once settled, with their
// audit entries.
func testOutbox(t *testing.T, open Factory) {
	ctx := ctxT(t)
	a, b := open(t)
	r := withOutbox(NewApproval(t, time.Hour), "ops", "chat")
	mustCreate(t, a, r)
	plain := NewSelection(t, 2, time.Hour) // no notifications at all
	mustCreate(t, a, plain)

	outboxReadBack(t, ctx, a, b, r)
	outboxSettle(t, ctx, a, b, r)
	outboxCleanup(t, ctx, a, b, r)
}

// outboxReadBack: the created notices are due at creation, whole through
// the other handle; the expiry notices at expiry; the limit is per target.
func outboxReadBack(t *testing.T, ctx context.Context, a, b elicitation.Store, r elicitation.Request) {
	wantDue(t, "before creation", b, T0.Add(-time.Second))
	got, err := b.DueDeliveries(ctx, T0, 100)
	must(t, err)
	if len(got) != 2 {
		t.Fatalf("due at creation: %d deliveries, want the 2 created notices: %+v", len(got), got)
	}
	for _, d := range got {
		want := delivery(t, r, elicitation.EventCreated, d.Target)
		if d.ID != want.ID || d.RequestID != r.State.ID || d.Event != elicitation.EventCreated || d.Link != want.Link ||
			!d.At.Equal(T0) || !d.DueAt.Equal(T0) || !d.RetainUntil.Equal(r.State.RetainUntil) || d.Attempts != 0 || d.Lease != "" {
			t.Errorf("delivery read back = %+v, want %+v", d, want)
		}
	}
	if n := len(dueIDs(t, b, r.State.ExpiresAt)); n != 4 {
		t.Errorf("due at expiry: %d deliveries, want 4 (created and expired, two targets)", n)
	}
	ds, err := b.DueDeliveries(ctx, r.State.ExpiresAt, 1)
	if err != nil || len(ds) != 2 || ds[0].Event != elicitation.EventCreated || ds[1].Event != elicitation.EventCreated || ds[0].Target == ds[1].Target {
		t.Errorf("DueDeliveries limit 1 = %+v, %v; want one created notice per target", ds, err)
	}
}

// outboxSettle: settled notices leave the outbox, the audit trail says so,
// and a settled delivery can be neither claimed nor settled again.
func outboxSettle(t *testing.T, ctx context.Context, a, b elicitation.Store, r elicitation.Request) {
	// Settle both created notices: they leave the outbox, the audit trail
	// says so.
	for _, tg := range []string{"ops", "chat"} {
		c, ok, err := b.ClaimDelivery(ctx, delivery(t, r, elicitation.EventCreated, tg), T0, T0.Add(time.Minute))
		if err != nil || !ok {
			t.Fatalf("claim created %s = %v, %v", tg, ok, err)
		}
		e := elicitation.AuditEntry{At: T0.Add(time.Second), Action: elicitation.ActionNotified, Principal: elicitation.Notifier, Detail: "created to " + tg + ": delivered"}
		if err := b.SettleDelivery(ctx, c, time.Time{}, e); err != nil {
			t.Fatalf("settle created %s: %v", tg, err)
		}
		if _, ok, err := a.ClaimDelivery(ctx, c, T0.Add(2*time.Minute), T0.Add(3*time.Minute)); ok || err != nil {
			t.Errorf("claim of a settled delivery = %v, %v; want not ok", ok, err)
		}
		if err := a.SettleDelivery(ctx, c, time.Time{}, e); !errors.Is(err, elicitation.ErrConflict) {
			t.Errorf("second settle = %v, want ErrConflict", err)
		}
	}
	wantDue(t, "after settling", a, T0.Add(time.Minute))
	wantDue(t, "at expiry", a, r.State.ExpiresAt, id(r, elicitation.EventExpired, "ops"), id(r, elicitation.EventExpired, "chat"))
	tr, err := a.Audit(ctx, r.State.ID)
	must(t, err)
	wantActions(t, tr, elicitation.ActionCreated, elicitation.ActionNotified, elicitation.ActionNotified)
	if tr.Entries[1].Detail != "created to ops: delivered" || tr.Entries[1].Principal != elicitation.Notifier {
		t.Errorf("notified entry = %+v", tr.Entries[1])
	}
}

// outboxCleanup: cleanup removes the deliveries of the requests it removes:
// a claim in flight can then no longer settle.
func outboxCleanup(t *testing.T, ctx context.Context, a, b elicitation.Store, r elicitation.Request) {
	orphan := withOutbox(NewApproval(t, 2*time.Hour), "ops")
	mustCreate(t, a, orphan)
	c, ok, err := a.ClaimDelivery(ctx, delivery(t, orphan, elicitation.EventCreated, "ops"), T0, T0.Add(time.Minute))
	if err != nil || !ok {
		t.Fatalf("claim = %v, %v", ok, err)
	}
	if n, err := b.Cleanup(ctx, r.State.RetainUntil); err != nil || n != 2 {
		t.Fatalf("Cleanup at the first request's retention end = %d, %v; want 2", n, err)
	}
	wantDue(t, "after the first cleanup", a, r.State.RetainUntil, id(orphan, elicitation.EventCreated, "ops"), id(orphan, elicitation.EventExpired, "ops"))
	if n, err := b.Cleanup(ctx, orphan.State.RetainUntil); err != nil || n != 1 {
		t.Fatalf("Cleanup = %d, %v; want 1", n, err)
	}
	wantDue(t, "after cleanup", a, orphan.State.RetainUntil.Add(time.Hour))
	if err := a.SettleDelivery(ctx, c, time.Time{}, elicitation.AuditEntry{At: T0, Action: elicitation.ActionNotified, Principal: elicitation.Notifier}); !errors.Is(err, elicitation.ErrConflict) {
		t.Errorf("settle after cleanup = %v, want ErrConflict", err)
	}
}

// testOutboxClaims: of racing claims through two handles exactly one wins;
// a claim holds the delivery until its lease ends, so a crashed attempt is
// taken again after it; a failed attempt backs off until its retry time; a
// stale claim cannot settle.
func testOutboxClaims(t *testing.T, open Factory) {
	ctx := ctxT(t)
	a, b := open(t)
	r := withOutbox(NewApproval(t, time.Hour), "ops")
	mustCreate(t, a, r)
	d := delivery(t, r, elicitation.EventCreated, "ops")

	if _, ok, err := a.ClaimDelivery(ctx, d, T0.Add(-time.Second), T0.Add(time.Minute)); ok || err != nil {
		t.Errorf("claim before it is due = %v, %v; want not ok", ok, err)
	}
	var (
		mu   sync.Mutex
		wins []elicitation.Delivery
	)
	errs := slices.DeleteFunc(race(10, a, b, func(_ int, s elicitation.Store) error {
		c, ok, err := s.ClaimDelivery(ctx, d, T0, T0.Add(time.Minute))
		if ok {
			mu.Lock()
			wins = append(wins, c)
			mu.Unlock()
		}
		return err
	}), func(err error) bool { return err == nil })
	if len(errs) > 0 || len(wins) != 1 {
		t.Fatalf("10 racing claims: %d won, errors %v; want exactly one winner", len(wins), errs)
	}
	first := wins[0]
	if first.Attempts != 1 || first.Lease == "" || !first.NotBefore.Equal(T0.Add(time.Minute)) || first.Link != d.Link {
		t.Errorf("claimed = %+v", first)
	}
	wantDue(t, "while claimed", b, T0.Add(30*time.Second))

	second := claimsAfterLease(t, ctx, a, b, d, first)
	claimsBackoff(t, ctx, a, b, r, d, second)
}

// claimsAfterLease: the attempt of first crashed; once its lease ends the
// delivery is due again and a new claim (returned) takes it; the old claim
// can no longer settle.
func claimsAfterLease(t *testing.T, ctx context.Context, a, b elicitation.Store, d, first elicitation.Delivery) elicitation.Delivery {
	wantDue(t, "after the lease", b, T0.Add(time.Minute), d.ID)
	second, ok, err := b.ClaimDelivery(ctx, d, T0.Add(time.Minute), T0.Add(2*time.Minute))
	if err != nil || !ok || second.Attempts != 2 || second.Lease == first.Lease {
		t.Fatalf("claim after the lease = %+v, %v, %v; want attempt 2 with a new lease", second, ok, err)
	}
	entry := elicitation.AuditEntry{At: T0.Add(time.Minute), Action: elicitation.ActionNotified, Principal: elicitation.Notifier, Detail: "created to ops: failed"}
	if err := a.SettleDelivery(ctx, first, time.Time{}, entry); !errors.Is(err, elicitation.ErrConflict) {
		t.Fatalf("settle with a stale lease = %v, want ErrConflict", err)
	}
	return second
}

// claimsBackoff: a failed attempt (second) is kept, backing off until its
// retry time, then claimed and settled.
func claimsBackoff(t *testing.T, ctx context.Context, a, b elicitation.Store, r elicitation.Request, d, second elicitation.Delivery) {
	entry := elicitation.AuditEntry{At: T0.Add(time.Minute), Action: elicitation.ActionNotified, Principal: elicitation.Notifier, Detail: "created to ops: failed"}
	retry := T0.Add(5 * time.Minute)
	if err := a.SettleDelivery(ctx, second, retry, entry); err != nil {
		t.Fatalf("settle for a retry: %v", err)
	}
	wantDue(t, "backing off", b, retry.Add(-time.Millisecond))
	if _, ok, err := b.ClaimDelivery(ctx, d, retry.Add(-time.Millisecond), retry.Add(time.Minute)); ok || err != nil {
		t.Errorf("claim while backing off = %v, %v; want not ok", ok, err)
	}
	wantDue(t, "at the retry time", b, retry, d.ID)
	third, ok, err := b.ClaimDelivery(ctx, d, retry, retry.Add(time.Minute))
	if err != nil || !ok || third.Attempts != 3 {
		t.Fatalf("claim at the retry time = %+v, %v, %v", third, ok, err)
	}
	if err := b.SettleDelivery(ctx, third, time.Time{}, entry); err != nil {
		t.Fatal(err)
	}
	wantDue(t, "settled", a, retry.Add(time.Hour), id(r, elicitation.EventExpired, "ops"))
	tr, err := a.Audit(ctx, r.State.ID)
	must(t, err)
	wantActions(t, tr, elicitation.ActionCreated, elicitation.ActionNotified, elicitation.ActionNotified)
}

// testOutboxResolve: a resolution writes its notices and withdraws the
// scheduled expiry notices in the same transaction; a resolution that is
// refused writes neither.
func testOutboxResolve(t *testing.T, open Factory) {
	ctx := ctxT(t)
	a, b := open(t)
	r := withOutbox(NewApproval(t, time.Hour), "ops")
	mustCreate(t, a, r)
	at := T0.Add(10 * time.Minute)
	decided := elicitation.NewDelivery(r.State, elicitation.EventDecided, "ops", at, at)
	res := elicitation.Resolution{
		Status: elicitation.StatusDeclined, SubmissionID: "sub-1", At: at, By: "reviewer",
		Outbox:   []elicitation.Delivery{decided},
		Withdraw: []elicitation.Delivery{delivery(t, r, elicitation.EventExpired, "ops")},
	}
	mustResolve(ctx, t, b, r.State.ID, res)
	wantDue(t, "after the decision, past expiry", a, r.State.ExpiresAt.Add(time.Hour), id(r, elicitation.EventCreated, "ops"), decided.ID)

	// The losing cancel's notice is never written.
	lost := elicitation.NewDelivery(r.State, elicitation.EventCanceled, "ops", at, at)
	_, err := a.Resolve(ctx, r.State.ID, elicitation.Resolution{Status: elicitation.StatusCanceled, At: at.Add(time.Second), By: "alice", Outbox: []elicitation.Delivery{lost}})
	wantErr(t, "cancel after the decision", err, elicitation.ErrConflict)
	// Nor is an expired request's.
	late := withOutbox(NewSelection(t, 2, time.Minute), "ops")
	mustCreate(t, b, late)
	lateAt := late.State.ExpiresAt
	_, err = b.Resolve(ctx, late.State.ID, elicitation.Resolution{
		Status: elicitation.StatusCanceled, At: lateAt, By: "alice",
		Outbox:   []elicitation.Delivery{elicitation.NewDelivery(late.State, elicitation.EventCanceled, "ops", lateAt, lateAt)},
		Withdraw: []elicitation.Delivery{delivery(t, late, elicitation.EventExpired, "ops")},
	})
	wantErr(t, "cancel at expiry", err, elicitation.ErrExpired)
	wantDue(t, "after the refused resolutions", a, r.State.ExpiresAt.Add(time.Hour),
		id(r, elicitation.EventCreated, "ops"), id(late, elicitation.EventCreated, "ops"), id(late, elicitation.EventExpired, "ops"), decided.ID)
	// The retried winner writes nothing again.
	if _, err := a.Resolve(ctx, r.State.ID, res); err != nil {
		t.Fatalf("retried decision: %v", err)
	}
	if n := len(dueIDs(t, a, r.State.ExpiresAt.Add(time.Hour))); n != 4 {
		t.Errorf("after the retried decision: %d due deliveries, want 4", n)
	}
}
