package elicitation_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/boltstore"
	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/elicitation/storetest"
	"github.com/mcp-elicitation/elicitation/internal/testclock"
)

func newService(t *testing.T) (*elicitation.Service, *testclock.Clock, *storetest.WaitSignal) {
	t.Helper()
	st, err := boltstore.Open(filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	c := testclock.New(time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC))
	ws := storetest.NewWaitSignal(st, 16)
	return elicitation.NewService(elicitation.Config{Store: ws, Now: c.Now, MaxWait: 5 * time.Second}), c, ws
}

func TestServiceSelectionFlow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc, c, store := newService(t)
	cr, err := svc.Create(ctx, "alice", elicitation.KindSelection, elicitation.Input{Message: "Which?", Options: options(4), MaxSelections: 2, TimeoutSeconds: 120})
	if err != nil {
		t.Fatal(err)
	}
	id := cr.State.ID
	if cr.State.Status != elicitation.StatusPending || !cr.State.ExpiresAt.Equal(c.Now().Add(2*time.Minute)) || cr.ReviewKey == "" {
		t.Fatalf("created %+v", cr)
	}
	// Another principal sees nothing.
	if _, err := svc.Status(ctx, "mallory", id); !errors.Is(err, elicitation.ErrNotFound) {
		t.Fatalf("other principal: %v", err)
	}
	if _, err := svc.Result(ctx, "alice", id); !errors.Is(err, elicitation.ErrNotDecided) {
		t.Fatalf("result while pending: %v", err)
	}
	// A wrong review key is not found.
	if _, err := svc.OpenReview(ctx, id, "wrong"); !errors.Is(err, elicitation.ErrNotFound) {
		t.Fatalf("wrong key: %v", err)
	}
	if _, err := svc.OpenReview(ctx, id, cr.ReviewKey); err != nil {
		t.Fatal(err)
	}
	// Malformed submissions decide nothing, and are audited.
	for _, bad := range []elicitation.Submission{
		{ID: "r1", Decision: elicitation.DecisionSubmitted, SelectedIDs: []string{"o0", "o1", "o2"}},
		{ID: "r1", Decision: elicitation.DecisionSubmitted, SelectedIDs: []string{"zzz"}},
		{ID: "r1", Decision: "maybe"},
		{ID: "", Decision: elicitation.DecisionSubmitted, SelectedIDs: []string{"o0"}},
	} {
		if _, err := svc.Submit(ctx, id, cr.ReviewKey, bad); elicitation.CodeOf(err) != elicitation.CodeInvalidArgument {
			t.Fatalf("bad submission %+v: %v", bad, err)
		}
	}
	if st, _ := svc.Status(ctx, "alice", id); st.Status != elicitation.StatusPending {
		t.Fatalf("malformed submission changed status to %s", st.Status)
	}
	// A waiter wakes on the decision.
	woke := make(chan elicitation.State, 1)
	store.Forget()
	go func() {
		st, err := svc.Await(ctx, "alice", id, 0)
		if err != nil {
			t.Error(err)
		}
		woke <- st
	}()
	store.InWait(t, id)
	ok := elicitation.Submission{ID: "r2", Decision: elicitation.DecisionSubmitted, SelectedIDs: []string{"o3", "o1"}}
	if _, err := svc.Submit(ctx, id, cr.ReviewKey, ok); err != nil {
		t.Fatal(err)
	}
	if st := <-woke; st.Status != elicitation.StatusSubmitted {
		t.Fatalf("await woke with %s", st.Status)
	}
	// The retry succeeds; another submission is a conflict.
	if _, err := svc.Submit(ctx, id, cr.ReviewKey, ok); err != nil {
		t.Fatalf("retry: %v", err)
	}
	// The same page resent with another answer (Back, another pick) is a
	// conflict, not a success for an answer that was not recorded.
	changed := ok
	changed.SelectedIDs = []string{"o0"}
	if _, err := svc.Submit(ctx, id, cr.ReviewKey, changed); !errors.Is(err, elicitation.ErrConflict) {
		t.Fatalf("same page, other answer: %v", err)
	}
	declined := elicitation.Submission{ID: ok.ID, Decision: elicitation.DecisionDeclined}
	if _, err := svc.Submit(ctx, id, cr.ReviewKey, declined); !errors.Is(err, elicitation.ErrConflict) {
		t.Fatalf("same page, other decision: %v", err)
	}
	other := ok
	other.ID = "r3"
	if _, err := svc.Submit(ctx, id, cr.ReviewKey, other); !errors.Is(err, elicitation.ErrConflict) {
		t.Fatalf("second submission: %v", err)
	}
	var heads []elicitation.AuditHead
	for range 2 {
		r, err := svc.Result(ctx, "alice", id)
		if err != nil {
			t.Fatal(err)
		}
		if r.State.Status != elicitation.StatusConsumed || r.Decision != elicitation.DecisionSubmitted || len(r.SelectedIDs) != 2 || r.SelectedIDs[0] != "o3" {
			t.Fatalf("result %+v", r)
		}
		heads = append(heads, r.AuditHead)
	}
	tr, err := svc.Audit(ctx, "alice", id)
	if err != nil {
		t.Fatal(err)
	}
	// Every fetch carries the head at the decision, which the trail
	// reaches.
	check, err := elicitation.VerifyAudit(id, tr.Entries)
	if err != nil || check.Chained != len(tr.Entries) {
		t.Fatalf("VerifyAudit = %+v, %v", check, err)
	}
	if decided := tr.Entries[6]; heads[0] != decided.Head() || heads[1] != heads[0] || heads[0].Seq != 7 {
		t.Errorf("result heads %v, want the decided entry's %v", heads, decided.Head())
	}
	var actions []elicitation.Action
	for _, e := range tr.Entries {
		actions = append(actions, e.Action)
	}
	want := []elicitation.Action{"created", "rendered", "submission_refused", "submission_refused", "submission_refused", "submission_refused", "decided", "submission_refused", "submission_refused", "submission_refused", "result_fetched", "result_fetched"}
	if len(actions) != len(want) {
		t.Fatalf("audit %v, want %v", actions, want)
	}
	for i := range want {
		if actions[i] != want[i] {
			t.Fatalf("audit %v, want %v", actions, want)
		}
	}
	_ = store
}

func TestServiceApprovalFormAndExpiry(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc, c, _ := newService(t)
	cr, err := svc.Create(ctx, "", elicitation.KindApproval, elicitation.Input{
		Message: "Fill", RequestedSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"},"ok":{"type":"boolean"}},"required":["n"]}`),
	})

	if err != nil {
		t.Fatal(err)
	}
	if cr.State.Owner != elicitation.Anonymous {
		t.Fatalf("owner %q", cr.State.Owner)
	}
	_, err = svc.Submit(ctx, cr.State.ID, cr.ReviewKey, elicitation.Submission{ID: "a", Decision: elicitation.DecisionSubmitted, Form: map[string][]string{"n": {"x"}}})
	var fe *elicitation.FormError
	if !errors.As(err, &fe) || fe.Fields[0].Field != "n" {
		t.Fatalf("bad form: %v", err)
	}
	if _, err := svc.Submit(ctx, cr.State.ID, cr.ReviewKey, elicitation.Submission{ID: "b", Decision: elicitation.DecisionSubmitted, Form: map[string][]string{"n": {"42"}}}); err != nil {
		t.Fatal(err)
	}
	r, err := svc.Result(ctx, "", cr.State.ID)
	if err != nil || string(r.Form) != `{"n":42,"ok":false}` {
		t.Fatalf("result %s, %v", r.Form, err)
	}

	// Expiry: a pending request expires by the clock, everywhere.
	cr2, err := svc.Create(ctx, "", elicitation.KindApproval, elicitation.Input{Message: "m", Context: json.RawMessage(`{}`), TimeoutSeconds: 60})
	if err != nil {
		t.Fatal(err)
	}
	c.Add(time.Minute)
	if st, _ := svc.Status(ctx, "", cr2.State.ID); st.Status != elicitation.StatusExpired {
		t.Fatalf("status at expiry %s", st.Status)
	}
	if st, err := svc.Await(ctx, "", cr2.State.ID, 0); err != nil || st.Status != elicitation.StatusExpired {
		t.Fatalf("await at expiry %s %v", st.Status, err)
	}
	if _, err := svc.Result(ctx, "", cr2.State.ID); !errors.Is(err, elicitation.ErrExpired) {
		t.Fatalf("result at expiry %v", err)
	}
	if _, err := svc.Cancel(ctx, "", cr2.State.ID); !errors.Is(err, elicitation.ErrExpired) {
		t.Fatalf("cancel at expiry %v", err)
	}
	if _, err := svc.Submit(ctx, cr2.State.ID, cr2.ReviewKey, elicitation.Submission{ID: "z", Decision: elicitation.DecisionDeclined}); !errors.Is(err, elicitation.ErrExpired) {
		t.Fatalf("submit at expiry %v", err)
	}
}

func TestServiceCancelAndAwaitBound(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc, _, store := newService(t)
	cr, err := svc.Create(ctx, "bob", elicitation.KindApproval, elicitation.Input{Message: "m", Context: json.RawMessage(`1`)})
	if err != nil {
		t.Fatal(err)
	}
	// The wait bound elapses: pending, no error.
	st, err := svc.Await(ctx, "bob", cr.State.ID, 50*time.Millisecond)
	if err != nil || st.Status != elicitation.StatusPending {
		t.Fatalf("await past bound: %s %v", st.Status, err)
	}
	// A caller's deadline shortens the bound (minus the margin): with less
	// time left than the margin it returns at once.
	dctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	if b := svc.WaitBound(dctx, 0); b != 0 {
		t.Fatalf("bound with 1s left and a 2s margin = %v", b)
	}
	if b := svc.WaitBound(ctx, time.Hour); b != 5*time.Second {
		t.Fatalf("waitSeconds cannot lengthen the bound: %v", b)
	}
	woke := make(chan elicitation.State, 1)
	store.Forget()
	go func() { st, _ := svc.Await(ctx, "bob", cr.State.ID, 0); woke <- st }()
	store.InWait(t, cr.State.ID)
	if _, err := svc.Cancel(ctx, "bob", cr.State.ID); err != nil {
		t.Fatal(err)
	}
	if st := <-woke; st.Status != elicitation.StatusCanceled {
		t.Fatalf("await woke with %s", st.Status)
	}
	if _, err := svc.Cancel(ctx, "bob", cr.State.ID); err != nil {
		t.Fatalf("second cancel: %v", err)
	}
	if _, err := svc.Result(ctx, "bob", cr.State.ID); !errors.Is(err, elicitation.ErrCanceled) {
		t.Fatalf("result after cancel: %v", err)
	}
	if _, err := svc.Submit(ctx, cr.State.ID, cr.ReviewKey, elicitation.Submission{ID: "x", Decision: elicitation.DecisionDeclined}); !errors.Is(err, elicitation.ErrCanceled) {
		t.Fatalf("submit after cancel: %v", err)
	}
	// Cancel after a decision is a conflict.
	cr2, _ := svc.Create(ctx, "bob", elicitation.KindApproval, elicitation.Input{Message: "m", Context: json.RawMessage(`1`)})
	if _, err := svc.Submit(ctx, cr2.State.ID, cr2.ReviewKey, elicitation.Submission{ID: "x", Decision: elicitation.DecisionSubmitted}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Cancel(ctx, "bob", cr2.State.ID); !errors.Is(err, elicitation.ErrConflict) {
		t.Fatalf("cancel after decision: %v", err)
	}
}
