package storetest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// testOutboxFairness: a target with a long queue never hides another
// target's deliveries (the limit is per target), and a target's new notice
// is listed before its older deliveries that are backing off after a
// failed attempt (earliest next attempt first).
func testOutboxFairness(t *testing.T, open Factory) {
	ctx := ctxT(t)
	a, b := open(t)
	// Twelve notices queued to "stuck", then one to "healthy", each a
	// millisecond after the last.
	var stuck []elicitation.Delivery
	for i := range 12 {
		r := NewApproval(t, time.Hour)
		d := elicitation.NewDelivery(r.State, elicitation.EventCreated, "stuck", T0, T0.Add(time.Duration(i)*time.Millisecond))
		r.Outbox = []elicitation.Delivery{d}
		mustCreate(t, a, r)
		stuck = append(stuck, d)
	}
	r := NewApproval(t, time.Hour)
	healthy := elicitation.NewDelivery(r.State, elicitation.EventCreated, "healthy", T0, T0.Add(12*time.Millisecond))
	r.Outbox = []elicitation.Delivery{healthy}
	mustCreate(t, a, r)

	now := T0.Add(time.Second)
	ds, err := b.DueDeliveries(ctx, now, 5)
	must(t, err)
	var got []string
	for _, d := range ds {
		got = append(got, d.ID)
	}
	want := []string{stuck[0].ID, stuck[1].ID, stuck[2].ID, stuck[3].ID, stuck[4].ID, healthy.ID}
	if !slices.Equal(got, want) {
		t.Errorf("DueDeliveries(limit 5) with 12 queued to one target = %v, want its 5 earliest and the other target's one %v", got, want)
	}

	// The first five stuck notices fail and back off for a minute; the
	// other seven (newer) come first now, then the retries when due.
	for i, d := range stuck[:5] {
		c, ok, err := a.ClaimDelivery(ctx, d, now, now.Add(time.Minute))
		if err != nil || !ok {
			t.Fatalf("claim stuck %d = %v, %v", i, ok, err)
		}
		e := elicitation.AuditEntry{At: now, Action: elicitation.ActionNotified, Principal: elicitation.Notifier, Detail: fmt.Sprintf("attempt %d failed", i)}
		if err := a.SettleDelivery(ctx, c, now.Add(time.Minute+time.Duration(i)*time.Millisecond), e); err != nil {
			t.Fatalf("settle stuck %d: %v", i, err)
		}
	}
	later := now.Add(2 * time.Minute)
	ds, err = b.DueDeliveries(ctx, later, 100)
	must(t, err)
	got = got[:0]
	for _, d := range ds {
		if d.Target == "stuck" {
			got = append(got, d.ID)
		}
	}
	want = want[:0]
	for _, d := range append(slices.Clone(stuck[5:]), stuck[:5]...) {
		want = append(want, d.ID)
	}
	if !slices.Equal(got, want) {
		t.Errorf("after five failed attempts, the stuck target's listing = %v, want the seven never tried first, then the retries %v", got, want)
	}
	if ds, err := b.DueDeliveries(ctx, now.Add(time.Second), 3); err != nil || len(ds) != 4 || ds[0].ID != stuck[5].ID {
		t.Errorf("while the retries back off, DueDeliveries(limit 3) = %+v, %v; want stuck 5..7 and healthy", ds, err)
	}
}
