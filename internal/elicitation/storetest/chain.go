package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// testAuditChain: every entry a store writes, through any of its writes,
// is chained to the one before it, and writers racing on one request's
// trail, through two handles, never fork the chain.
func testAuditChain(t *testing.T, open Factory) {
	ctx := ctxT(t)
	a, b := open(t)
	t.Run("EveryWrite", func(t *testing.T) { chainEveryWrite(t, ctx, a, b) })
	t.Run("Racing", func(t *testing.T) { chainRacing(t, ctx, a, b) })
}

func chainEveryWrite(t *testing.T, ctx context.Context, a, b elicitation.Store) {
	r := withOutbox(NewApproval(t, time.Hour), "ops")
	mustCreate(t, a, r)
	id := r.State.ID
	at := T0
	next := func() time.Time { at = at.Add(time.Millisecond); return at }
	must(t, b.Append(ctx, id, elicitation.AuditEntry{At: next(), Action: elicitation.ActionRendered, Principal: "reviewer"}))
	must(t, a.Append(ctx, id, elicitation.AuditEntry{At: next(), Action: elicitation.ActionPushed, Principal: "alice"}))
	if _, err := b.AppendOnce(ctx, id, "push", elicitation.AuditEntry{At: next(), Action: elicitation.ActionPushAnswered, Principal: "alice"}); err != nil {
		t.Fatal(err)
	}
	d := delivery(t, r, elicitation.EventCreated, "ops")
	claimed, ok, err := a.ClaimDelivery(ctx, d, next(), at.Add(time.Minute))
	if err != nil || !ok {
		t.Fatalf("ClaimDelivery = %v, %v", ok, err)
	}
	must(t, b.SettleDelivery(ctx, claimed, time.Time{}, elicitation.AuditEntry{At: next(), Action: elicitation.ActionPushed, Principal: "ops"}))
	mustResolve(ctx, t, a, id, elicitation.Resolution{Status: elicitation.StatusSubmitted, SubmissionID: "s", At: next(), By: "reviewer", Answer: &elicitation.Answer{Form: []byte(`{"reason":"ok"}`)}})
	for _, h := range []elicitation.Store{b, a} {
		if _, err := h.Consume(ctx, id, elicitation.AuditEntry{At: next(), Action: elicitation.ActionResultFetched, Principal: "alice"}); err != nil {
			t.Fatal(err)
		}
	}
	tr, err := b.Audit(ctx, id)
	must(t, err)
	wantChain(t, id, tr, 8)
}

func chainRacing(t *testing.T, ctx context.Context, a, b elicitation.Store) {
	r := NewApproval(t, time.Hour)
	mustCreate(t, a, r)
	id := r.State.ID
	const n = 12
	at := func(i int) time.Time { return T0.Add(time.Duration(i+1) * time.Millisecond) }
	errs := race(n, a, b, func(i int, h elicitation.Store) error {
		e := elicitation.AuditEntry{At: at(i), Action: elicitation.ActionRendered, Principal: "reviewer", Detail: fmt.Sprint(i)}
		switch i % 4 {
		case 1:
			e.Action = elicitation.ActionPushed
			return h.Append(ctx, id, e)
		case 2:
			_, err := h.AppendOnce(ctx, id, fmt.Sprint("mark ", i), e)
			return err
		case 3:
			if i == 3 {
				_, err := h.Resolve(ctx, id, elicitation.Resolution{Status: elicitation.StatusDeclined, SubmissionID: "s", At: at(i), By: "reviewer"})
				return err
			}
		}
		return h.Append(ctx, id, e)
	})
	for i, err := range errs {
		if err != nil {
			t.Errorf("writer %d: %v", i, err)
		}
	}
	tr, err := a.Audit(ctx, id)
	must(t, err)
	wantChain(t, id, tr, n+1)
}

// wantChain checks that id's trail holds n entries, all chained, Seq 1 to n.
func wantChain(t *testing.T, id string, tr elicitation.AuditTrail, n int) {
	t.Helper()
	check, err := elicitation.VerifyAudit(id, tr.Entries)
	if err != nil {
		t.Fatalf("VerifyAudit: %v", err)
	}
	if check.Unchained != 0 || check.Chained != n || check.Head.Seq != uint64(n) || len(tr.Entries) != n {
		t.Errorf("chain = %+v over %d entries, want %d chained", check, len(tr.Entries), n)
	}
}
