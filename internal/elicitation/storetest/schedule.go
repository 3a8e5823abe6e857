package storetest

import (
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// testOutboxScheduled: reminders and escalation notices written by Create
// (several steps of one event to one target, each with its own id) are due
// at their own times, read back with their step, and a resolution that
// withdraws them leaves none, sent or not.
func testOutboxScheduled(t *testing.T, open Factory) {
	ctx := ctxT(t)
	a, b := open(t)
	r := withOutbox(NewApproval(t, time.Hour), "ops")
	var steps []elicitation.Delivery
	for i, at := range []time.Duration{15 * time.Minute, 30 * time.Minute, 45 * time.Minute} {
		d := elicitation.NewDelivery(r.State, elicitation.EventReminder, "ops", T0.Add(at), T0.Add(at))
		d.ID, d.Step, d.Link = elicitation.StepDeliveryID(r.State.ID, elicitation.EventReminder, "ops", i+1), i+1, "https://review.example/review/"+r.State.ID+"/key"
		steps = append(steps, d)
	}
	esc := elicitation.NewDelivery(r.State, elicitation.EventEscalated, "lead", T0.Add(20*time.Minute), T0.Add(20*time.Minute))
	esc.ID, esc.Step = elicitation.StepDeliveryID(r.State.ID, elicitation.EventEscalated, "lead", 1), 1
	steps = append(steps, esc)
	r.Outbox = append(r.Outbox, steps...)
	mustCreate(t, a, r)

	created := id(r, elicitation.EventCreated, "ops")
	wantDue(t, "before the first reminder", b, T0.Add(14*time.Minute), created)
	wantDue(t, "at 20 minutes", b, T0.Add(20*time.Minute), created, steps[0].ID, esc.ID)
	ds, err := b.DueDeliveries(ctx, T0.Add(31*time.Minute), 100)
	must(t, err)
	for _, d := range ds {
		if d.ID == steps[1].ID && (d.Step != 2 || d.Event != elicitation.EventReminder || d.Link == "") {
			t.Errorf("reminder 2 read back as %+v", d)
		}
		if d.ID == esc.ID && (d.Step != 1 || d.Target != "lead" || d.Link != "") {
			t.Errorf("escalation read back as %+v", d)
		}
	}
	// The first reminder is sent and settled; the decision withdraws the
	// rest (and the one already gone writes nothing).
	c, ok, err := a.ClaimDelivery(ctx, steps[0], T0.Add(16*time.Minute), T0.Add(17*time.Minute))
	if err != nil || !ok || c.Step != 1 {
		t.Fatalf("claim reminder 1: %+v %v %v", c, ok, err)
	}
	if err := a.SettleDelivery(ctx, c, time.Time{}, elicitation.AuditEntry{At: T0.Add(16 * time.Minute), Action: elicitation.ActionNotified, Principal: elicitation.Notifier, Detail: "reminder 1 to ops: delivered (attempt 1)"}); err != nil {
		t.Fatal(err)
	}
	at := T0.Add(35 * time.Minute)
	res := elicitation.Resolution{Status: elicitation.StatusSubmitted, SubmissionID: "sub-1", At: at, By: "reviewer", Answer: &elicitation.Answer{},
		Withdraw: append([]elicitation.Delivery{delivery(t, r, elicitation.EventExpired, "ops")}, steps...)}
	mustResolve(ctx, t, b, r.State.ID, res)
	wantDue(t, "after the decision", a, T0.Add(2*time.Hour), created)
}
