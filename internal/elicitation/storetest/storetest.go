// Package storetest is the contract every elicitation.Store implementation
// passes: one suite, run unchanged against the embedded store and against
// DynamoDB.
//
//	func TestContract(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) (a, b elicitation.Store) { ... })
//	}
package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/testenv"
)

// Factory opens a fresh, empty store and returns two handles on the same
// data (two clients of one table, two opens of one file), closed by t.Cleanup.
type Factory func(t *testing.T) (a, b elicitation.Store)

// T0 is the time the suite's requests are created at. Times round-trip at
// millisecond precision at least.
var T0 = time.Date(2026, 3, 14, 15, 9, 26, 535_000_000, time.UTC)

// Run runs the whole contract, its tests in parallel (each opens its own
// store).
func Run(t *testing.T, open Factory) {
	for _, c := range []struct {
		name string
		test func(*testing.T, Factory)
	}{
		{"CreateAndRead", testCreateAndRead}, {"Transitions", testTransitions},
		{"ExpiryBoundary", testExpiryBoundary}, {"RetriedSubmission", testRetriedSubmission},
		{"OverlappingResends", testOverlappingResends}, {"Consume", testConsume}, {"Audit", testAudit}, {"AuditChain", testAuditChain},
		{"AppendOnce", testAppendOnce}, {"Retention", testRetention}, {"ConcurrentDeciders", testConcurrentDeciders},
		{"Watch", testWatch}, {"LargeSelection", testLargeSelection}, {"Outbox", testOutbox},
		{"OutboxClaims", testOutboxClaims}, {"OutboxResolve", testOutboxResolve}, {"OutboxFairness", testOutboxFairness},
		{"OutboxScheduled", testOutboxScheduled}, {"Inbox", testInbox}, {"Owned", testOwned},
		{"Quorum", testQuorum}, {"PendingCap", testPendingCap}, {"Rules", testRules}, {"Standing", testStanding},
		{"Delegations", testDelegations}, {"DelegationsFull", testDelegationsFull},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.test(t, open)
		})
	}
}

// NewSelection returns a valid pending selection request created at T0 with
// n options, owned by "alice", expiring after ttl.
func NewSelection(t testing.TB, n int, ttl time.Duration) elicitation.Request {
	t.Helper()
	opts := make([]json.RawMessage, n)
	for i := range opts {
		opts[i] = json.RawMessage(fmt.Sprintf(`{"id":"opt-%d","label":"Option %d","domain":"example-%d.com","score":%d.5}`, i, i, i, i))
	}
	p, err := elicitation.Input{Message: "Which one?", Options: opts, MaxSelections: min(n, 3), RowTemplate: "{{ option.label }}"}.Payload(elicitation.KindSelection)
	if err != nil {
		t.Fatalf("build selection: %v", err)
	}
	return newRequest(elicitation.KindSelection, p, ttl)
}

// NewApproval returns a valid pending approval with a form, created at T0.
func NewApproval(t testing.TB, ttl time.Duration) elicitation.Request {
	t.Helper()
	p, err := elicitation.Input{
		Message: "Deploy?", Context: json.RawMessage(`{"service":"api","replicas":3,"tags":["a","b"]}`),
		RequestedSchema: json.RawMessage(`{"type":"object","properties":{"reason":{"type":"string","maxLength":200},"ok":{"type":"boolean"}},"required":["reason"]}`),
		Labels:          elicitation.Labels{Submit: "Ship it"},
		Client:          elicitation.Client{Name: "claude-code", Version: "2.1.0"},
	}.Payload(elicitation.KindApproval)
	if err != nil {
		t.Fatalf("build approval: %v", err)
	}
	return newRequest(elicitation.KindApproval, p, ttl)
}

func newRequest(kind elicitation.Kind, p elicitation.Payload, ttl time.Duration) elicitation.Request {
	_, p.ReviewKeyHash = elicitation.NewReviewKey()
	st := elicitation.State{
		ID: elicitation.NewID(), Kind: kind, Owner: "alice", Status: elicitation.StatusPending,
		CreatedAt: T0, ExpiresAt: T0.Add(ttl), RetainUntil: T0.Add(ttl + 7*24*time.Hour),
	}
	return elicitation.Request{State: st, Payload: p}
}

func created(r elicitation.Request) elicitation.AuditEntry {
	return elicitation.AuditEntry{At: r.State.CreatedAt, Action: elicitation.ActionCreated, Principal: r.State.Owner, Detail: string(r.State.Kind)}
}

func mustCreate(t *testing.T, s elicitation.Store, r elicitation.Request) {
	t.Helper()
	if err := s.Create(context.Background(), r, created(r)); err != nil {
		t.Fatalf("Create: %v", err)
	}
}

// must fails t with err, if any.
func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// mustResolve lands res on the request id through s, or fails t.
func mustResolve(ctx context.Context, t testing.TB, s elicitation.Store, id string, res elicitation.Resolution) {
	t.Helper()
	if _, err := s.Resolve(ctx, id, res); err != nil {
		t.Fatal(err)
	}
}

// ctxT is a case's context (testenv.Context).
func ctxT(t *testing.T) context.Context { return testenv.Context(t) }

// sameState fails t unless got and want agree field by field.
func sameState(t *testing.T, what string, got, want elicitation.State) {
	t.Helper()
	g, _ := json.Marshal(normalize(got))
	w, _ := json.Marshal(normalize(want))
	if string(g) != string(w) {
		t.Errorf("%s: state\n got %s\nwant %s", what, g, w)
	}
}

func normalize(s elicitation.State) elicitation.State {
	for _, p := range []*time.Time{&s.CreatedAt, &s.ExpiresAt, &s.RetainUntil, &s.DecidedAt, &s.ConsumedAt} {
		if !p.IsZero() {
			*p = p.UTC().Truncate(time.Millisecond)
		}
	}
	return s
}

func wantErr(t *testing.T, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("%s: err = %v, want %v", what, err, target)
	}
}

func testCreateAndRead(t *testing.T, open Factory) {
	ctx := ctxT(t)
	a, b := open(t)
	for _, r := range []elicitation.Request{NewSelection(t, 5, time.Hour), NewApproval(t, time.Hour)} {
		mustCreate(t, a, r)
		st, err := b.State(ctx, r.State.ID)
		if err != nil {
			t.Fatalf("State: %v", err)
		}
		sameState(t, "State after Create", st, r.State)
		rec, err := b.Load(ctx, r.State.ID)
		if err != nil {
			t.Fatalf("Load: %v", err)
		}
		sameState(t, "Load after Create", rec.State, r.State)
		gp, _ := json.Marshal(rec.Payload)
		wp, _ := json.Marshal(r.Payload)
		if string(gp) != string(wp) {
			t.Errorf("payload does not round-trip:\n got %s\nwant %s", gp, wp)
		}
		if rec.Answer != nil {
			t.Errorf("pending request has an answer: %+v", rec.Answer)
		}
		if rec.Payload.ReviewKeyMatches("wrong") {
			t.Errorf("review key hash matches a wrong key")
		}
		err = b.Create(ctx, r, created(r))
		wantErr(t, "second Create with the same id", err, elicitation.ErrConflict)
	}
	_, err := a.State(ctx, "no-such-id")
	wantErr(t, "State of unknown id", err, elicitation.ErrNotFound)
	_, err = a.Load(ctx, "no-such-id")
	wantErr(t, "Load of unknown id", err, elicitation.ErrNotFound)
	_, err = a.Resolve(ctx, "no-such-id", elicitation.Resolution{Status: elicitation.StatusCanceled, At: T0, By: "alice"})
	wantErr(t, "Resolve of unknown id", err, elicitation.ErrNotFound)
	_, err = a.Consume(ctx, "no-such-id", elicitation.AuditEntry{At: T0, Action: elicitation.ActionResultFetched, Principal: "alice"})
	wantErr(t, "Consume of unknown id", err, elicitation.ErrNotFound)
	err = a.Append(ctx, "no-such-id", elicitation.AuditEntry{At: T0, Action: elicitation.ActionRendered, Principal: "reviewer"})
	wantErr(t, "Append to unknown id", err, elicitation.ErrNotFound)
	_, err = a.Audit(ctx, "no-such-id")
	wantErr(t, "Audit of unknown id", err, elicitation.ErrNotFound)
}

func testTransitions(t *testing.T, open Factory) {
	ctx := ctxT(t)
	a, b := open(t)
	answer := &elicitation.Answer{SelectedIDs: []string{"opt-1", "opt-2"}}
	form := &elicitation.Answer{Form: json.RawMessage(`{"ok":true,"reason":"looks fine"}`), Comment: "ship it after 18:00"}
	declineNote := &elicitation.Answer{Comment: "none of these: I need a\n2-bed flat <b>&</b>"}
	for _, tc := range []struct {
		name    string
		req     elicitation.Request
		res     elicitation.Resolution
		want    elicitation.Status
		answer  *elicitation.Answer
		outcome elicitation.Decision
	}{
		{"selection submitted", NewSelection(t, 5, time.Hour), elicitation.Resolution{Status: elicitation.StatusSubmitted, SubmissionID: "s1", By: "reviewer", Via: elicitation.ViaHostForm, Answer: answer}, elicitation.StatusSubmitted, answer, elicitation.DecisionSubmitted},
		{"selection declined", NewSelection(t, 5, time.Hour), elicitation.Resolution{Status: elicitation.StatusDeclined, SubmissionID: "s1", By: "reviewer"}, elicitation.StatusDeclined, nil, elicitation.DecisionDeclined},
		{"selection declined with a comment", NewSelection(t, 5, time.Hour), elicitation.Resolution{Status: elicitation.StatusDeclined, SubmissionID: "s1", By: "reviewer", Via: elicitation.ViaPage, Answer: declineNote}, elicitation.StatusDeclined, declineNote, elicitation.DecisionDeclined},
		{"approval submitted with form", NewApproval(t, time.Hour), elicitation.Resolution{Status: elicitation.StatusSubmitted, SubmissionID: "s1", By: "bob", Via: elicitation.ViaApp, Issuer: "https://idp.example", Answer: form}, elicitation.StatusSubmitted, form, elicitation.DecisionSubmitted},
		{"approval canceled", NewApproval(t, time.Hour), elicitation.Resolution{Status: elicitation.StatusCanceled, By: "alice"}, elicitation.StatusCanceled, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mustCreate(t, a, tc.req)
			tc.res.At = T0.Add(10 * time.Minute)
			st, err := b.Resolve(ctx, tc.req.State.ID, tc.res)
			if err != nil {
				t.Fatalf("Resolve: %v", err)
			}
			want := tc.res.Apply(tc.req.State)
			sameState(t, "Resolve result", st, want)
			if st.Status != tc.want || st.Decision != tc.outcome {
				t.Errorf("status %q decision %q, want %q %q", st.Status, st.Decision, tc.want, tc.outcome)
			}
			got, err := a.State(ctx, tc.req.State.ID)
			must(t, err)
			sameState(t, "State after Resolve via the other handle", got, want)
			rec, err := a.Load(ctx, tc.req.State.ID)
			must(t, err)
			ga, _ := json.Marshal(rec.Answer)
			wa, _ := json.Marshal(tc.answer)
			if string(ga) != string(wa) {
				t.Errorf("answer = %s, want %s", ga, wa)
			}
			// Every later resolution is refused, with the current state.
			for _, late := range []elicitation.Resolution{
				{Status: elicitation.StatusSubmitted, SubmissionID: "other", At: T0.Add(11 * time.Minute), By: "reviewer", Answer: answer},
				{Status: elicitation.StatusDeclined, SubmissionID: "other2", At: T0.Add(11 * time.Minute), By: "reviewer"},
				{Status: elicitation.StatusCanceled, At: T0.Add(11 * time.Minute), By: "alice"},
			} {
				st, err := a.Resolve(ctx, tc.req.State.ID, late)
				wantErr(t, "late "+string(late.Status), err, elicitation.ErrConflict)
				sameState(t, "state returned with conflict", st, want)
			}
			got, _ = b.State(ctx, tc.req.State.ID)
			sameState(t, "state after refused late resolutions", got, want)
			tr, err := b.Audit(ctx, tc.req.State.ID)
			must(t, err)
			wantActions(t, tr, elicitation.ActionCreated, tc.res.AuditEntry().Action)
			// Where the decision was made is in the state and in its audit entry.
			if want.DecidedVia != tc.res.Via && tc.res.Status != elicitation.StatusCanceled {
				t.Errorf("Apply dropped Via %q: %q", tc.res.Via, want.DecidedVia)
			}
			if last := tr.Entries[len(tr.Entries)-1]; last.Via != tc.res.Via || last.Issuer != tc.res.Issuer {
				t.Errorf("audit entry via = %q, issuer %q, want %q, %q", last.Via, last.Issuer, tc.res.Via, tc.res.Issuer)
			}
		})
	}
}

func wantActions(t *testing.T, tr elicitation.AuditTrail, want ...elicitation.Action) {
	t.Helper()
	var got []string
	for _, e := range tr.Entries {
		got = append(got, string(e.Action))
	}
	var w []string
	for _, a := range want {
		w = append(w, string(a))
	}
	if strings.Join(got, ",") != strings.Join(w, ",") {
		t.Errorf("audit actions = %v, want %v", got, w)
	}
}

func testExpiryBoundary(t *testing.T, open Factory) {
	ctx := ctxT(t)
	a, b := open(t)
	for _, tc := range []struct {
		name    string
		at      time.Duration // after ExpiresAt
		status  elicitation.Status
		wantErr error
	}{
		{"a millisecond before expiry", -time.Millisecond, elicitation.StatusSubmitted, nil},
		{"exactly at expiry", 0, elicitation.StatusSubmitted, elicitation.ErrExpired},
		{"after expiry", time.Hour, elicitation.StatusSubmitted, elicitation.ErrExpired},
		{"cancel a millisecond before expiry", -time.Millisecond, elicitation.StatusCanceled, nil},
		{"cancel at expiry", 0, elicitation.StatusCanceled, elicitation.ErrExpired},
		{"decline after expiry", time.Minute, elicitation.StatusDeclined, elicitation.ErrExpired},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := NewSelection(t, 3, time.Minute)
			mustCreate(t, a, r)
			res := elicitation.Resolution{Status: tc.status, SubmissionID: "sub", At: r.State.ExpiresAt.Add(tc.at), By: "reviewer"}
			if tc.status == elicitation.StatusSubmitted {
				res.Answer = &elicitation.Answer{SelectedIDs: []string{"opt-0"}}
			}
			if tc.status == elicitation.StatusCanceled {
				res.SubmissionID = ""
			}
			st, err := b.Resolve(ctx, r.State.ID, res)
			if tc.wantErr == nil {
				if err != nil || st.Status != tc.status {
					t.Fatalf("Resolve = %v, %v; want %s", st.Status, err, tc.status)
				}
				return
			}
			wantErr(t, "Resolve", err, tc.wantErr)
			if st.Status != elicitation.StatusPending {
				t.Errorf("state returned with ErrExpired has status %q, want pending", st.Status)
			}
			if got := st.StatusAt(res.At); got != elicitation.StatusExpired {
				t.Errorf("derived status = %q, want expired", got)
			}
			st, _ = a.State(ctx, r.State.ID)
			if st.Status != elicitation.StatusPending || st.StatusAt(r.State.ExpiresAt) != elicitation.StatusExpired {
				t.Errorf("expired request changed: %+v", st)
			}
			rec, _ := a.Load(ctx, r.State.ID)
			if rec.Answer != nil {
				t.Errorf("refused resolution left an answer")
			}
		})
	}
}

func testRetriedSubmission(t *testing.T, open Factory) {
	ctx := ctxT(t)
	a, b := open(t)
	r := NewSelection(t, 4, time.Hour)
	mustCreate(t, a, r)
	win := elicitation.Resolution{Status: elicitation.StatusSubmitted, SubmissionID: "render-1", At: T0.Add(time.Minute), By: "reviewer", Answer: &elicitation.Answer{SelectedIDs: []string{"opt-3"}}}
	first, err := a.Resolve(ctx, r.State.ID, win)
	if err != nil {
		t.Fatalf("first Resolve: %v", err)
	}
	// The same submission, retried later through the other handle (a lost
	// response, an SDK retry, a double tap), is the success it was.
	retry := win
	retry.At = T0.Add(2 * time.Minute)
	again, err := b.Resolve(ctx, r.State.ID, retry)
	if err != nil {
		t.Fatalf("retried Resolve: %v", err)
	}
	sameState(t, "retry answer", again, first)
	// Even after the request was consumed.
	if _, err := a.Consume(ctx, r.State.ID, elicitation.AuditEntry{At: T0.Add(3 * time.Minute), Action: elicitation.ActionResultFetched, Principal: "alice"}); err != nil {
		t.Fatal(err)
	}
	if st, err := b.Resolve(ctx, r.State.ID, retry); err != nil || st.SubmissionID != "render-1" {
		t.Fatalf("retry after consume = %+v, %v", st, err)
	}
	// The same submission id with another answer (the page sent again
	// after Back and another choice) is not a retry: a conflict.
	for _, changed := range []elicitation.Resolution{
		{Status: elicitation.StatusSubmitted, SubmissionID: "render-1", At: T0.Add(2 * time.Minute), By: "reviewer", Answer: &elicitation.Answer{SelectedIDs: []string{"opt-2"}}},
		{Status: elicitation.StatusSubmitted, SubmissionID: "render-1", At: T0.Add(2 * time.Minute), By: "reviewer", Answer: &elicitation.Answer{SelectedIDs: []string{"opt-3", "opt-1"}}},
		{Status: elicitation.StatusDeclined, SubmissionID: "render-1", At: T0.Add(2 * time.Minute), By: "reviewer"},
	} {
		st, err := b.Resolve(ctx, r.State.ID, changed)
		wantErr(t, "same submission id, another answer", err, elicitation.ErrConflict)
		if st.SubmissionID != "render-1" || st.Decision != elicitation.DecisionSubmitted {
			t.Errorf("conflict shows state %+v, want the recorded decision", st)
		}
	}
	// Another submission is a conflict, and so is a retry of another request's id.
	other := win
	other.SubmissionID = "render-2"
	_, err = b.Resolve(ctx, r.State.ID, other)
	wantErr(t, "different submission", err, elicitation.ErrConflict)
	tr, err := a.Audit(ctx, r.State.ID)
	must(t, err)
	wantActions(t, tr, elicitation.ActionCreated, elicitation.ActionDecided, elicitation.ActionResultFetched)
	rec, _ := a.Load(ctx, r.State.ID)
	if rec.Answer == nil || strings.Join(rec.Answer.SelectedIDs, ",") != "opt-3" {
		t.Errorf("answer after retries = %+v", rec.Answer)
	}
}

// testOverlappingResends: one rendered page (one submission id) posted
// several times at once with different answers, through both handles.
// Exactly the posts that carry the recorded answer succeed; every other one
// is a conflict, so no reviewer is told "sent" for an answer that was not
// recorded.
func testOverlappingResends(t *testing.T, open Factory) {
	ctx := ctxT(t)
	a, b := open(t)
	rounds := 20
	if testing.Short() {
		rounds = 5
	}
	for round := range rounds {
		r := NewSelection(t, 4, time.Hour)
		mustCreate(t, a, r)
		type outcome struct {
			res elicitation.Resolution
			st  elicitation.State
			err error
		}
		out := make([]outcome, 8)
		race(len(out), a, b, func(i int, _ elicitation.Store) error {
			res := elicitation.Resolution{Status: elicitation.StatusSubmitted, SubmissionID: "render-1", At: T0.Add(time.Minute), By: "reviewer", Answer: &elicitation.Answer{SelectedIDs: []string{fmt.Sprint("opt-", i%2)}}}
			if i == 7 {
				res = elicitation.Resolution{Status: elicitation.StatusDeclined, SubmissionID: "render-1", At: T0.Add(time.Minute), By: "reviewer"}
			}
			h := a // each answer through both handles
			if i%4 >= 2 {
				h = b
			}
			st, err := h.Resolve(ctx, r.State.ID, res)
			out[i] = outcome{res, st, err}
			return err
		})
		rec, err := a.Load(ctx, r.State.ID)
		must(t, err)
		recorded, _ := json.Marshal(rec.Answer)
		for i, o := range out {
			sent, _ := json.Marshal(o.res.Answer)
			same := rec.State.Decision == elicitation.Decision(o.res.Status) && string(sent) == string(recorded)
			switch {
			case o.err == nil && !same:
				t.Fatalf("round %d: post %d (%s %s) told success, but %s %s was recorded", round, i, o.res.Status, sent, rec.State.Decision, recorded)
			case o.err != nil && same:
				t.Fatalf("round %d: post %d carrying the recorded answer got %v", round, i, o.err)
			case o.err != nil && !errors.Is(o.err, elicitation.ErrConflict):
				t.Fatalf("round %d: post %d got %v, want ErrConflict", round, i, o.err)
			}
		}
		tr, err := a.Audit(ctx, r.State.ID)
		must(t, err)
		wantActions(t, tr, elicitation.ActionCreated, elicitation.ActionDecided)
	}
}

func testConsume(t *testing.T, open Factory) {
	ctx := ctxT(t)
	a, b := open(t)
	fetch := func(at time.Duration) elicitation.AuditEntry {
		return elicitation.AuditEntry{At: T0.Add(at), Action: elicitation.ActionResultFetched, Principal: "alice"}
	}
	t.Run("pending and canceled refuse", func(t *testing.T) {
		r := NewApproval(t, time.Hour)
		mustCreate(t, a, r)
		st, err := b.Consume(ctx, r.State.ID, fetch(time.Minute))
		wantErr(t, "Consume pending", err, elicitation.ErrConflict)
		if st.Status != elicitation.StatusPending {
			t.Errorf("state with conflict = %q", st.Status)
		}
		mustResolve(ctx, t, a, r.State.ID, elicitation.Resolution{Status: elicitation.StatusCanceled, At: T0.Add(2 * time.Minute), By: "alice"})
		st, err = b.Consume(ctx, r.State.ID, fetch(3*time.Minute))
		wantErr(t, "Consume canceled", err, elicitation.ErrConflict)
		if st.Status != elicitation.StatusCanceled {
			t.Errorf("state with conflict = %q", st.Status)
		}
		tr, _ := a.Audit(ctx, r.State.ID)
		wantActions(t, tr, elicitation.ActionCreated, elicitation.ActionCanceled)
	})
	for _, d := range []elicitation.Status{elicitation.StatusSubmitted, elicitation.StatusDeclined} {
		t.Run(string(d), func(t *testing.T) {
			r := NewApproval(t, time.Hour)
			mustCreate(t, a, r)
			res := elicitation.Resolution{Status: d, SubmissionID: "x", At: T0.Add(time.Minute), By: "reviewer"}
			if d == elicitation.StatusSubmitted {
				res.Answer = &elicitation.Answer{Form: json.RawMessage(`{"reason":"ok"}`)}
			}
			mustResolve(ctx, t, a, r.State.ID, res)
			st1, err := b.Consume(ctx, r.State.ID, fetch(2*time.Minute))
			if err != nil {
				t.Fatalf("first Consume: %v", err)
			}
			st2, err := a.Consume(ctx, r.State.ID, fetch(3*time.Minute))
			if err != nil {
				t.Fatalf("second Consume: %v", err)
			}
			want := res.Apply(r.State)
			want.Status = elicitation.StatusConsumed
			want.ConsumedAt = T0.Add(2 * time.Minute)
			sameState(t, "first Consume", st1, want)
			sameState(t, "second Consume keeps the first ConsumedAt", st2, want)
			rec, _ := b.Load(ctx, r.State.ID)
			if (rec.Answer != nil) != (d == elicitation.StatusSubmitted) {
				t.Errorf("answer after consume = %+v", rec.Answer)
			}
			tr, _ := a.Audit(ctx, r.State.ID)
			wantActions(t, tr, elicitation.ActionCreated, elicitation.ActionDecided, elicitation.ActionResultFetched, elicitation.ActionResultFetched)
		})
	}
}

// wantEntries fails t unless got are want, in order, field by field.
func wantEntries(t *testing.T, got, want []elicitation.AuditEntry) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("audit has %d entries, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if !g.At.Equal(w.At) || g.Action != w.Action || g.Principal != w.Principal || g.Detail != w.Detail || g.Via != w.Via || g.Issuer != w.Issuer {
			t.Errorf("entry %d = %+v, want %+v", i, g, w)
		}
	}
}

func testAudit(t *testing.T, open Factory) {
	ctx := ctxT(t)
	a, b := open(t)
	r := NewSelection(t, 3, time.Hour)
	mustCreate(t, a, r)
	at := T0
	next := func() time.Time { at = at.Add(time.Millisecond); return at }
	var want []elicitation.AuditEntry
	want = append(want, created(r))
	// Bounded actions beyond the cap are counted, not stored; the others
	// are all stored, in order, interleaved through both handles.
	extra := 7
	for i := range elicitation.AuditCap + extra {
		e := elicitation.AuditEntry{At: next(), Action: elicitation.ActionRendered, Principal: "reviewer", Detail: fmt.Sprint("render ", i)}
		h := a
		if i%2 == 1 {
			h = b
		}
		if err := h.Append(ctx, r.State.ID, e); err != nil {
			t.Fatalf("Append render %d: %v", i, err)
		}
		if i < elicitation.AuditCap {
			want = append(want, e)
		}
		if i%10 == 0 {
			f := elicitation.AuditEntry{At: next(), Action: elicitation.ActionSubmissionRefused, Principal: "reviewer", Detail: "bad token"}
			if err := h.Append(ctx, r.State.ID, f); err != nil {
				t.Fatal(err)
			}
			want = append(want, f)
		}
	}
	res := elicitation.Resolution{Status: elicitation.StatusDeclined, SubmissionID: "s", At: next(), By: "reviewer", Via: elicitation.ViaHostForm}
	mustResolve(ctx, t, b, r.State.ID, res)
	want = append(want, res.AuditEntry())
	for range 3 {
		e := elicitation.AuditEntry{At: next(), Action: elicitation.ActionResultFetched, Principal: "alice"}
		if _, err := a.Consume(ctx, r.State.ID, e); err != nil {
			t.Fatal(err)
		}
		want = append(want, e)
	}
	tr, err := b.Audit(ctx, r.State.ID)
	must(t, err)
	wantEntries(t, tr.Entries, want)
	if tr.Omitted[elicitation.ActionRendered] != extra || tr.Omitted[elicitation.ActionSubmissionRefused] != 0 {
		t.Errorf("omitted = %v, want %d renders", tr.Omitted, extra)
	}
	// Audit trails of different requests stay apart.
	r2 := NewApproval(t, time.Hour)
	mustCreate(t, b, r2)
	tr2, err := a.Audit(ctx, r2.State.ID)
	must(t, err)
	wantActions(t, tr2, elicitation.ActionCreated)
}

func testRetention(t *testing.T, open Factory) {
	ctx := ctxT(t)
	a, b := open(t)
	decided := NewSelection(t, 3, time.Minute)
	pending := NewApproval(t, time.Minute)
	long := NewApproval(t, 24*time.Hour)
	for _, r := range []elicitation.Request{decided, pending, long} {
		mustCreate(t, a, r)
	}
	mustResolve(ctx, t, a, decided.State.ID, elicitation.Resolution{Status: elicitation.StatusSubmitted, SubmissionID: "s", At: T0.Add(30 * time.Second), By: "reviewer", Answer: &elicitation.Answer{SelectedIDs: []string{"opt-1"}}})
	// Long after expiry, but before the end of retention, a decided
	// request keeps its outcome; nothing is removed.
	n, err := b.Cleanup(ctx, decided.State.RetainUntil.Add(-time.Millisecond))
	if err != nil || n != 0 {
		t.Fatalf("Cleanup before retention ends = %d, %v; want 0", n, err)
	}
	rec, err := a.Load(ctx, decided.State.ID)
	if err != nil || rec.Answer == nil || rec.State.Status != elicitation.StatusSubmitted {
		t.Fatalf("decided request before retention ends = %+v, %v", rec, err)
	}
	// At the end of retention both short requests go, with their audit
	// trails; the long one stays.
	n, err = b.Cleanup(ctx, decided.State.RetainUntil)
	if err != nil || n != 2 {
		t.Fatalf("Cleanup at retention end = %d, %v; want 2", n, err)
	}
	for _, id := range []string{decided.State.ID, pending.State.ID} {
		_, err := a.State(ctx, id)
		wantErr(t, "State after cleanup", err, elicitation.ErrNotFound)
		_, err = a.Load(ctx, id)
		wantErr(t, "Load after cleanup", err, elicitation.ErrNotFound)
		_, err = a.Audit(ctx, id)
		wantErr(t, "Audit after cleanup", err, elicitation.ErrNotFound)
	}
	if _, err := a.State(ctx, long.State.ID); err != nil {
		t.Fatalf("long request removed too early: %v", err)
	}
	if n, err := a.Cleanup(ctx, decided.State.RetainUntil); err != nil || n != 0 {
		t.Errorf("second Cleanup = %d, %v; want 0", n, err)
	}
}

func testConcurrentDeciders(t *testing.T, open Factory) {
	ctx := ctxT(t)
	a, b := open(t)
	rounds := 10
	if testing.Short() {
		rounds = 3
	}
	for round := range rounds {
		r := NewSelection(t, 20, time.Hour)
		mustCreate(t, a, r)
		type outcome struct {
			res elicitation.Resolution
			st  elicitation.State
			err error
		}
		out := make([]outcome, 21)
		race(len(out), a, b, func(i int, h elicitation.Store) error {
			res := elicitation.Resolution{Status: elicitation.StatusSubmitted, SubmissionID: fmt.Sprint("sub-", i), At: T0.Add(time.Minute), By: fmt.Sprint("reviewer-", i), Answer: &elicitation.Answer{SelectedIDs: []string{fmt.Sprint("opt-", i%20)}}}
			if i == 20 {
				res = elicitation.Resolution{Status: elicitation.StatusCanceled, At: T0.Add(time.Minute), By: "alice"}
			}
			st, err := h.Resolve(ctx, r.State.ID, res)
			out[i] = outcome{res, st, err}
			return err
		})
		var winners []outcome
		for _, o := range out {
			switch {
			case o.err == nil:
				winners = append(winners, o)
			case !errors.Is(o.err, elicitation.ErrConflict):
				t.Fatalf("round %d: loser got %v, want ErrConflict", round, o.err)
			}
		}
		if len(winners) != 1 {
			t.Fatalf("round %d: %d winners, want exactly 1", round, len(winners))
		}
		w := winners[0]
		final, err := a.State(ctx, r.State.ID)
		must(t, err)
		sameState(t, "final state is the winner's", final, w.res.Apply(r.State))
		for _, o := range out {
			if o.err != nil && o.st.SubmissionID != w.res.SubmissionID {
				t.Errorf("round %d: a loser was shown state %+v, not the winner's", round, o.st)
			}
		}
		rec, _ := b.Load(ctx, r.State.ID)
		ga, _ := json.Marshal(rec.Answer)
		wa, _ := json.Marshal(w.res.Answer)
		if string(ga) != string(wa) {
			t.Errorf("round %d: answer %s, want the winner's %s", round, ga, wa)
		}
		tr, _ := a.Audit(ctx, r.State.ID)
		wantActions(t, tr, elicitation.ActionCreated, w.res.AuditEntry().Action)
	}
}

// declineAmongWaiters creates a selection, starts n waits on it (wait,
// through a and b in turn), calls started, declines it through a, and
// checks that every wait returned the decline.
func declineAmongWaiters(t *testing.T, a, b elicitation.Store, n int, wait func(h elicitation.Store, id string) (elicitation.State, error), started func()) {
	t.Helper()
	ctx := ctxT(t)
	r := NewSelection(t, 2, time.Hour)
	mustCreate(t, a, r)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		h := a
		if i%2 == 0 {
			h = b
		}
		wg.Go(func() {
			st, err := wait(h, r.State.ID)
			if err == nil && st.Status != elicitation.StatusDeclined {
				err = fmt.Errorf("status %q", st.Status)
			}
			errs <- err
		})
	}
	started()
	mustResolve(ctx, t, a, r.State.ID, elicitation.Resolution{Status: elicitation.StatusDeclined, SubmissionID: "s", At: T0, By: "reviewer"})
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("waiter: %v", err)
		}
	}
}

func testLargeSelection(t *testing.T, open Factory) {
	ctx := ctxT(t)
	a, b := open(t)
	// 500 options near the per-option limit: the largest request a client
	// may make must round-trip whole.
	opts := make([]json.RawMessage, elicitation.MaxOptions)
	for i := range opts {
		opts[i] = json.RawMessage(fmt.Sprintf(`{"id":"option-%03d","label":"Option %d","notes":%q}`, i, i, strings.Repeat("x", 400)))
	}
	p, err := elicitation.Input{Message: "Pick", Options: opts, MaxSelections: 500}.Payload(elicitation.KindSelection)
	must(t, err)
	r := newRequest(elicitation.KindSelection, p, time.Hour)
	mustCreate(t, a, r)
	rec, err := b.Load(ctx, r.State.ID)
	must(t, err)
	gp, _ := json.Marshal(rec.Payload)
	wp, _ := json.Marshal(r.Payload)
	if string(gp) != string(wp) {
		t.Fatalf("500-option payload does not round-trip (%d vs %d bytes)", len(gp), len(wp))
	}
	all := make([]string, 500)
	for i := range all {
		all[i] = fmt.Sprintf("option-%03d", i)
	}
	mustResolve(ctx, t, a, r.State.ID, elicitation.Resolution{Status: elicitation.StatusSubmitted, SubmissionID: "s", At: T0, By: "reviewer", Answer: &elicitation.Answer{SelectedIDs: all}})
	rec, err = b.Load(ctx, r.State.ID)
	if err != nil || rec.Answer == nil || len(rec.Answer.SelectedIDs) != 500 {
		t.Fatalf("500 selected ids do not round-trip: %v", err)
	}
}
