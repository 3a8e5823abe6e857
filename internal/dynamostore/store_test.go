package dynamostore_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/dynamostore"
	"github.com/mcp-elicitation/elicitation/internal/dynamostore/dynamotest"
	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

func TestMain(m *testing.M) { os.Exit(dynamotest.Main(m)) }

var t0 = time.Date(2026, 6, 1, 12, 0, 0, 123456789, time.UTC)

// twoHandles returns two Stores, each with its own client, on one fresh table.
func twoHandles(t testing.TB) (a, b *dynamostore.Store) {
	t.Helper()
	a, _, table := dynamotest.Store(t, dynamostore.Options{})
	b = dynamostore.New(dynamotest.Client(dynamotest.Endpoint(t)), table, dynamostore.Options{})
	return a, b
}

func selection(n, optionBytes int) elicitation.Request {
	id := elicitation.NewID()
	_, hash := elicitation.NewReviewKey()
	opts := make([]elicitation.Option, n)
	for i := range opts {
		oid := fmt.Sprintf("opt-%03d", i)
		label := fmt.Sprintf("Option %d: flight LH%04d Frankfurt → Lisbon, economy", i, 1000+i*7)
		raw, _ := json.Marshal(map[string]any{
			"id": oid, "label": label, "price": 129.5 + float64(i), "currency": "EUR",
			"description": realisticText(i, optionBytes),
		})
		opts[i] = elicitation.Option{ID: oid, Label: label, Raw: raw}
	}
	return elicitation.Request{
		State: elicitation.State{
			ID: id, Kind: elicitation.KindSelection, Owner: "agent-1", Status: elicitation.StatusPending,
			CreatedAt: t0, ExpiresAt: t0.Add(time.Hour), RetainUntil: t0.Add(time.Hour + 7*24*time.Hour),
		},
		Payload: elicitation.Payload{
			Message: "Pick a flight", Options: opts, MinSelections: 1, MaxSelections: 1,
			Templates:     elicitation.Templates{Row: "<b>{{ option.label }}</b> {{ option.price }}"},
			ReviewKeyHash: hash,
		},
	}
}

// realisticText is varied prose of about n bytes (not one repeated byte, so
// that compression figures mean something).
func realisticText(seed, n int) string {
	words := strings.Fields("departs arrives terminal gate baggage included seat selection refundable " +
		"changes allowed fee lounge access priority boarding meal vegetarian window aisle legroom " +
		"operated by partner airline connection layover minutes hours overnight transfer bus rail")
	var b strings.Builder
	x := uint32(seed*2654435761 + 1)
	for b.Len() < n {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b.WriteString(words[x%uint32(len(words))])
		if x%7 == 0 {
			fmt.Fprintf(&b, " %d", x%997)
		}
		b.WriteByte(' ')
	}
	return b.String()
}

func approval() elicitation.Request {
	r := selection(1, 10)
	r.State.Kind = elicitation.KindApproval
	r.Payload = elicitation.Payload{Message: "Deploy?", Context: json.RawMessage(`{"service":"api","version":"1.2.3"}`), ReviewKeyHash: r.Payload.ReviewKeyHash}
	return r
}

func created(r elicitation.Request) elicitation.AuditEntry {
	return elicitation.AuditEntry{At: r.State.CreatedAt, Action: elicitation.ActionCreated, Principal: r.State.Owner, Detail: string(r.State.Kind)}
}

func mustCreate(t testing.TB, s elicitation.Store, r elicitation.Request) {
	t.Helper()
	if err := s.Create(context.Background(), r, created(r)); err != nil {
		t.Fatalf("Create: %v", err)
	}
}

func submit(sub string, at time.Time, ids ...string) elicitation.Resolution {
	return elicitation.Resolution{Status: elicitation.StatusSubmitted, SubmissionID: sub, At: at, By: elicitation.Reviewer, Answer: &elicitation.Answer{SelectedIDs: ids}}
}

func TestCreateLoadRoundTrip(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, b := twoHandles(t)
	for _, r := range []elicitation.Request{approval(), selection(3, 200), selection(500, 1000)} {
		mustCreate(t, a, r)
		rec, err := b.Load(ctx, r.State.ID)
		if err != nil {
			t.Fatalf("Load: %v", err)
		}
		if !reflect.DeepEqual(rec.State, r.State) {
			t.Errorf("state:\n got %+v\nwant %+v", rec.State, r.State)
		}
		if !reflect.DeepEqual(rec.Payload, r.Payload) {
			t.Errorf("payload of %d options differs after a round trip", len(r.Payload.Options))
		}
		if rec.Answer != nil {
			t.Errorf("answer before a decision: %+v", rec.Answer)
		}
		if err := b.Create(ctx, r, created(r)); !errors.Is(err, elicitation.ErrConflict) {
			t.Errorf("second Create: %v, want ErrConflict", err)
		}
	}
	if _, err := a.State(ctx, "nope"); !errors.Is(err, elicitation.ErrNotFound) {
		t.Errorf("State of a missing id: %v", err)
	}
	if _, err := a.Load(ctx, "nope"); !errors.Is(err, elicitation.ErrNotFound) {
		t.Errorf("Load of a missing id: %v", err)
	}
}

func TestResolveExactlyOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, b := twoHandles(t)
	r := selection(5, 100)
	mustCreate(t, a, r)
	at := t0.Add(time.Minute)

	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := []elicitation.Store{a, b}[i%2]
			_, errs[i] = s.Resolve(ctx, r.State.ID, submit(fmt.Sprintf("sub-%d", i), at, "opt-001"))
		}()
	}
	wg.Wait()
	wins := 0
	for i, err := range errs {
		switch {
		case err == nil:
			wins++
		case !errors.Is(err, elicitation.ErrConflict):
			t.Errorf("resolver %d: %v, want nil or ErrConflict", i, err)
		}
	}
	if wins != 1 {
		t.Fatalf("%d resolutions won, want 1", wins)
	}
	st, err := b.State(ctx, r.State.ID)
	if err != nil {
		t.Fatal(err)
	}
	// The winner's retry succeeds again; a cancel conflicts.
	again, err := a.Resolve(ctx, r.State.ID, submit(st.SubmissionID, at.Add(time.Second), "opt-001"))
	if err != nil || !reflect.DeepEqual(again, st) {
		t.Errorf("retry of the winner: %+v, %v; want %+v", again, err, st)
	}
	got, err := a.Resolve(ctx, r.State.ID, elicitation.Resolution{Status: elicitation.StatusCanceled, At: at, By: "agent-1"})
	if !errors.Is(err, elicitation.ErrConflict) || !reflect.DeepEqual(got, st) {
		t.Errorf("cancel after decision: %+v, %v", got, err)
	}
	tr, err := a.Audit(ctx, r.State.ID)
	if err != nil {
		t.Fatal(err)
	}
	decided := 0
	for _, e := range tr.Entries {
		if e.Action == elicitation.ActionDecided {
			decided++
		}
	}
	if decided != 1 {
		t.Errorf("%d decided entries, want 1: %+v", decided, tr.Entries)
	}
	rec, err := a.Load(ctx, r.State.ID)
	if err != nil || rec.Answer == nil || !reflect.DeepEqual(rec.Answer.SelectedIDs, []string{"opt-001"}) {
		t.Errorf("answer: %+v, %v", rec.Answer, err)
	}
}

func TestResolveExpiredAndMissing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, _ := twoHandles(t)
	r := approval()
	mustCreate(t, a, r)
	st, err := a.Resolve(ctx, r.State.ID, submit("s1", r.State.ExpiresAt))
	if !errors.Is(err, elicitation.ErrExpired) || st.Status != elicitation.StatusPending {
		t.Errorf("at expiresAt: %+v, %v", st, err)
	}
	if _, err := a.Resolve(ctx, "missing", submit("s1", t0)); !errors.Is(err, elicitation.ErrNotFound) {
		t.Errorf("missing: %v", err)
	}
	st, err = a.Resolve(ctx, r.State.ID, elicitation.Resolution{Status: elicitation.StatusCanceled, At: r.State.ExpiresAt.Add(-time.Nanosecond), By: "agent-1"})
	if err != nil || st.Status != elicitation.StatusCanceled || st.Decision != "" {
		t.Errorf("cancel just before expiry: %+v, %v", st, err)
	}
}

func TestConsume(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, b := twoHandles(t)
	r := approval()
	mustCreate(t, a, r)
	fetch := func(at time.Time) elicitation.AuditEntry {
		return elicitation.AuditEntry{At: at, Action: elicitation.ActionResultFetched, Principal: "agent-1"}
	}
	if st, err := a.Consume(ctx, r.State.ID, fetch(t0)); !errors.Is(err, elicitation.ErrConflict) || st.Status != elicitation.StatusPending {
		t.Errorf("consume pending: %+v, %v", st, err)
	}
	if _, err := a.Resolve(ctx, r.State.ID, elicitation.Resolution{Status: elicitation.StatusDeclined, SubmissionID: "x", At: t0.Add(time.Second), By: "rev"}); err != nil {
		t.Fatal(err)
	}
	st1, err := b.Consume(ctx, r.State.ID, fetch(t0.Add(2*time.Second)))
	if err != nil || st1.Status != elicitation.StatusConsumed || !st1.ConsumedAt.Equal(t0.Add(2*time.Second)) || st1.Decision != elicitation.DecisionDeclined {
		t.Fatalf("consume: %+v, %v", st1, err)
	}
	st2, err := a.Consume(ctx, r.State.ID, fetch(t0.Add(3*time.Second)))
	if err != nil || !reflect.DeepEqual(st2, st1) {
		t.Errorf("consume again: %+v, %v; want %+v", st2, err, st1)
	}
	if stored, _ := a.State(ctx, r.State.ID); !reflect.DeepEqual(stored, st1) {
		t.Errorf("stored %+v, want %+v", stored, st1)
	}
	tr, _ := a.Audit(ctx, r.State.ID)
	var acts []elicitation.Action
	for _, e := range tr.Entries {
		acts = append(acts, e.Action)
	}
	want := []elicitation.Action{elicitation.ActionCreated, elicitation.ActionDecided, elicitation.ActionResultFetched, elicitation.ActionResultFetched}
	if !reflect.DeepEqual(acts, want) {
		t.Errorf("audit %v, want %v", acts, want)
	}
	if _, err := a.Consume(ctx, "missing", fetch(t0)); !errors.Is(err, elicitation.ErrNotFound) {
		t.Errorf("missing: %v", err)
	}
}

func TestAuditOrderAndCap(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, b := twoHandles(t)
	r := approval()
	mustCreate(t, a, r)
	// Append order decides, the chain's: for the same At, and for an
	// earlier At appended later (another process's clock behind).
	same := t0.Add(time.Minute)
	for i, s := range []elicitation.Store{a, b, a, b} {
		e := elicitation.AuditEntry{At: same, Action: elicitation.ActionSubmissionRefused, Principal: "reviewer", Detail: fmt.Sprint(i)}
		if err := s.Append(ctx, r.State.ID, e); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Append(ctx, r.State.ID, elicitation.AuditEntry{At: t0.Add(time.Second), Action: elicitation.ActionRendered, Principal: "reviewer", Detail: "early"}); err != nil {
		t.Fatal(err)
	}
	for i := range elicitation.AuditCap + 5 {
		e := elicitation.AuditEntry{At: t0.Add(2 * time.Minute), Action: elicitation.ActionRendered, Principal: "reviewer", Detail: fmt.Sprint(i)}
		if err := a.Append(ctx, r.State.ID, e); err != nil {
			t.Fatal(err)
		}
	}
	tr, err := b.Audit(ctx, r.State.ID)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range tr.Entries[:7] {
		got = append(got, string(e.Action)+":"+e.Detail)
	}
	want := []string{"created:approval", "submission_refused:0", "submission_refused:1", "submission_refused:2", "submission_refused:3", "rendered:early", "rendered:0"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
	renders := 0
	for _, e := range tr.Entries {
		if e.Action == elicitation.ActionRendered {
			renders++
		}
	}
	if renders != elicitation.AuditCap || tr.Omitted[elicitation.ActionRendered] != 6 {
		t.Errorf("%d renders stored, omitted %v; want %d and 6", renders, tr.Omitted, elicitation.AuditCap)
	}
	if err := a.Append(ctx, "missing", elicitation.AuditEntry{At: t0, Action: elicitation.ActionRendered}); !errors.Is(err, elicitation.ErrNotFound) {
		t.Errorf("append to missing: %v", err)
	}
	if _, err := a.Audit(ctx, "missing"); !errors.Is(err, elicitation.ErrNotFound) {
		t.Errorf("audit of missing: %v", err)
	}
}

func TestWaitAcrossHandles(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, _, table := dynamotest.Store(t, dynamostore.Options{})
	b := dynamostore.New(dynamotest.Client(dynamotest.Endpoint(t)), table, dynamostore.Options{})
	r := approval()
	mustCreate(t, a, r)

	// A bounded wait on a pending request returns the state and ctx's error.
	wctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	st, err := wait(wctx, a, r.State.ID)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) || st.Status != elicitation.StatusPending {
		t.Errorf("bounded wait: %+v, %v", st, err)
	}

	// A wait through a third handle, whose polls are counted, sees b's
	// decision once it is polling.
	wf := newFaults(nil)
	w := dynamostore.New(dynamotest.Client(dynamotest.Endpoint(t), withFaults(wf)), table, dynamostore.Options{})
	polled := wf.reached("GetItem", 2)
	done := make(chan struct{})
	var got elicitation.State
	go func() {
		defer close(done)
		got, err = wait(ctx, w, r.State.ID)
	}()
	polling(t, polled)
	landed := time.Now()
	if _, err := b.Resolve(ctx, r.State.ID, submit("s", t0.Add(time.Second))); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Wait did not see a resolution through the other handle")
	}
	if err != nil || got.Status != elicitation.StatusSubmitted {
		t.Errorf("wait: %+v, %v", got, err)
	}
	if d := time.Since(landed); d > time.Second {
		t.Errorf("woke %v after the decision", d)
	}
	if _, err := wait(ctx, a, "missing"); !errors.Is(err, elicitation.ErrNotFound) {
		t.Errorf("wait on missing: %v", err)
	}
}

func TestCleanup(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, b := twoHandles(t)
	old, young := selection(500, 1000), approval()
	old.State.RetainUntil = t0.Add(2 * time.Hour)
	young.State.RetainUntil = t0.Add(3 * time.Hour)
	mustCreate(t, a, old)
	mustCreate(t, a, young)
	for i := range 60 {
		_ = a.Append(ctx, old.State.ID, elicitation.AuditEntry{At: t0, Action: elicitation.ActionRendered, Principal: "reviewer", Detail: fmt.Sprint(i)})
	}
	if first, err := b.AppendOnce(ctx, old.State.ID, "pushed\x00agent-1", elicitation.AuditEntry{At: t0, Action: elicitation.ActionPushed, Principal: "agent-1"}); err != nil || !first {
		t.Fatalf("AppendOnce = %v, %v", first, err)
	}
	if n, err := b.Cleanup(ctx, t0.Add(2*time.Hour-time.Nanosecond)); err != nil || n != 0 {
		t.Fatalf("cleanup before retention ends: %d, %v", n, err)
	}
	if n, err := b.Cleanup(ctx, t0.Add(2*time.Hour)); err != nil || n != 1 {
		t.Fatalf("cleanup: %d, %v; want 1", n, err)
	}
	if _, err := a.State(ctx, old.State.ID); !errors.Is(err, elicitation.ErrNotFound) {
		t.Errorf("state after cleanup: %v", err)
	}
	if _, err := a.Audit(ctx, old.State.ID); !errors.Is(err, elicitation.ErrNotFound) {
		t.Errorf("audit after cleanup: %v", err)
	}
	if left, err := a.CountItems(ctx, old.State.ID); err != nil || left != 0 {
		t.Errorf("%d items of the removed request left (%v)", left, err)
	}
	if _, err := a.State(ctx, young.State.ID); err != nil {
		t.Errorf("young request: %v", err)
	}
}

// TestAppendOnceItem: the mark is one item in the request's audit partition,
// under a key derived from the mark, with the request's ttl; Audit does not
// list it.
func TestAppendOnceItem(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, _ := twoHandles(t)
	r := approval()
	mustCreate(t, a, r)
	before, err := a.TTLs(ctx, r.State.ID)
	if err != nil {
		t.Fatal(err)
	}
	mark := "pushed\x00agent-1"
	if first, err := a.AppendOnce(ctx, r.State.ID, mark, elicitation.AuditEntry{At: t0, Action: elicitation.ActionPushed, Principal: "agent-1", Detail: "how"}); err != nil || !first {
		t.Fatalf("AppendOnce = %v, %v", first, err)
	}
	after, err := a.TTLs(ctx, r.State.ID)
	if err != nil {
		t.Fatal(err)
	}
	markKey := "audit#" + r.State.ID + " once#" + elicitation.MarkKey(mark)
	want := before["req#"+r.State.ID+" state"]
	if ttl, ok := after[markKey]; !ok || ttl != want || want == 0 {
		t.Errorf("mark item %q: ttl %d (present %v), want the state's %d; items %v", markKey, ttl, ok, want, after)
	}
	if len(after) != len(before)+2 { // the mark and its entry
		t.Errorf("%d items after AppendOnce, want %d: %v", len(after), len(before)+2, after)
	}
	for k, ttl := range after {
		if ttl != want {
			t.Errorf("item %s: ttl %d, want %d", k, ttl, want)
		}
	}
	tr, err := a.Audit(ctx, r.State.ID)
	if err != nil || len(tr.Entries) != 2 || tr.Entries[1].Action != elicitation.ActionPushed {
		t.Errorf("audit = %+v, %v; want created, pushed", tr.Entries, err)
	}
}

// TestSetTTLTwice: SetTTL leaves a TTL already in the state asked for as
// it is (CreateTable whose first attempt timed out but landed leaves the
// table's TTL to the caller, dynamotest.Table then turns it off).
func TestSetTTLTwice(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := dynamotest.Client(dynamotest.Endpoint(t))
	table := dynamotest.Table(t, c) // TTL on, then off
	for _, on := range []bool{false, true, true, false} {
		if err := dynamostore.SetTTL(ctx, c, table, on); err != nil {
			t.Fatalf("SetTTL(%v): %v", on, err)
		}
	}
}
