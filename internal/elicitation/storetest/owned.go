package storetest

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// testOwned: each principal's index lists that principal's requests and no
// one else's, newest first, whatever their status, as the other handle
// wrote them; pages continue where the last ended, through requests
// created at the same instant, and say when there is no more; Cleanup
// takes a request out with the rest of it; an owner of any length and
// bytes has its own listing.
func testOwned(t *testing.T, open Factory) {
	a, b := open(t)
	long := strings.Repeat("ü", 1500) + "\x00/#"
	alice, others := createOwned(t, a, b, long)
	got := listOwned(t, b, "alice", 100)
	if !sameIDs(got, alice, 3) {
		t.Errorf("alice's listing %v, want %v (newest first; the three at one instant in any order)", ids(got), reqIDs(alice))
	}
	if len(got) > 0 {
		sameState(t, "listed state", got[len(got)-1], alice[len(alice)-1].State)
	}
	for _, p := range []int{1, 2, 3, len(alice)} {
		if paged := listOwned(t, b, "alice", p); !slices.Equal(ids(paged), ids(got)) {
			t.Errorf("pages of %d listed %v, want %v", p, ids(paged), ids(got))
		}
	}
	for owner, want := range map[string][]elicitation.Request{"bob": others[:1], long: others[1:], "carol": nil, strings.Repeat("ü", 1500): nil} {
		if g := listOwned(t, a, owner, 10); !slices.Equal(ids(g), reqIDs(want)) {
			t.Errorf("the listing of %.20q is %v, want only theirs, %v", owner, ids(g), reqIDs(want))
		}
	}
	checkOwnedStatuses(t, a, b, alice)
	checkOwnedCleanup(t, a, b, alice)
}

// createOwned creates alice's requests (returned newest first: five a
// second apart, three at one instant, and a short one that Cleanup removes
// first), one of bob's and one of long's (others).
func createOwned(t *testing.T, a, b elicitation.Store, long string) (alice, others []elicitation.Request) {
	at := func(r elicitation.Request, owner string, after, ttl time.Duration) elicitation.Request {
		r.State.Owner = owner
		r.State.CreatedAt = T0.Add(after)
		r.State.ExpiresAt = r.State.CreatedAt.Add(ttl)
		r.State.RetainUntil = r.State.ExpiresAt.Add(time.Hour)
		return r
	}
	add := func(r elicitation.Request) {
		alice = append([]elicitation.Request{r}, alice...)
		mustCreate(t, a, r)
	}
	for i := range 5 {
		add(at(NewApproval(t, time.Hour), "alice", time.Duration(i)*time.Second, time.Hour))
	}
	for range 3 {
		add(at(NewSelection(t, 2, time.Hour), "alice", 10*time.Second, 24*time.Hour))
	}
	add(at(NewSelection(t, 2, time.Minute), "alice", 20*time.Second, time.Minute))
	others = []elicitation.Request{at(NewApproval(t, time.Hour), "bob", 30*time.Second, time.Hour), at(NewApproval(t, time.Hour), long, 5*time.Second, time.Hour)}
	mustCreate(t, a, others[0])
	mustCreate(t, b, others[1])
	return alice, others
}

// checkOwnedStatuses: decided, canceled and consumed requests stay
// listed, as stored.
func checkOwnedStatuses(t *testing.T, a, b elicitation.Store, alice []elicitation.Request) {
	ctx := ctxT(t)
	decided, canceled := alice[len(alice)-1].State.ID, alice[len(alice)-2].State.ID
	mustResolve(ctx, t, a, decided, elicitation.Resolution{Status: elicitation.StatusSubmitted, SubmissionID: "s1", At: T0.Add(time.Minute), By: "reviewer"})
	if _, err := a.Consume(ctx, decided, elicitation.AuditEntry{At: T0.Add(2 * time.Minute), Action: elicitation.ActionResultFetched, Principal: "alice"}); err != nil {
		t.Fatal(err)
	}
	mustResolve(ctx, t, a, canceled, elicitation.Resolution{Status: elicitation.StatusCanceled, At: T0.Add(time.Minute), By: "alice"})
	status := map[string]elicitation.State{}
	for _, st := range listOwned(t, b, "alice", 100) {
		status[st.ID] = st
	}
	if st := status[decided]; st.Status != elicitation.StatusConsumed || st.Decision != elicitation.DecisionSubmitted || st.ConsumedAt.IsZero() || st.DecidedAt.IsZero() {
		t.Errorf("the decided and fetched request is listed as %+v", st)
	}
	if st := status[canceled]; st.Status != elicitation.StatusCanceled {
		t.Errorf("the canceled request is listed as %+v", st)
	}
}

// checkOwnedCleanup: Cleanup past the short request's retention takes it
// out, and only it; a page goes on from a request that is gone; past
// every retention nothing is listed.
func checkOwnedCleanup(t *testing.T, a, b elicitation.Store, alice []elicitation.Request) {
	ctx := ctxT(t)
	short := alice[0].State
	if _, err := a.Cleanup(ctx, short.RetainUntil); err != nil {
		t.Fatal(err)
	}
	if g := listOwned(t, b, "alice", 100); !sameIDs(g, alice[1:], 3) {
		t.Errorf("after the cleanup of %s: listed %v, want %v", short.ID, ids(g), reqIDs(alice[1:]))
	}
	if g, more, err := b.OwnedRequests(ctx, "alice", elicitation.PositionOf(short), 100); err != nil || more || !sameIDs(g, alice[1:], 3) {
		t.Errorf("after the removed %s: listed %v (more %v, %v), want %v", short.ID, ids(g), more, err, reqIDs(alice[1:]))
	}
	if _, err := a.Cleanup(ctx, T0.Add(30*24*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if g := listOwned(t, b, "alice", 100); len(g) != 0 {
		t.Errorf("after every retention: listed %v", ids(g))
	}
}

// listOwned reads owner's whole listing in pages of size, checking that
// every page is full but the last, and that only the last says no more.
func listOwned(t *testing.T, s elicitation.Store, owner string, size int) []elicitation.State {
	t.Helper()
	var all []elicitation.State
	var after elicitation.OwnedPosition
	for page := 0; ; page++ {
		got, more, err := s.OwnedRequests(ctxT(t), owner, after, size)
		if err != nil {
			t.Fatalf("OwnedRequests(%.20q, page %d of %d): %v", owner, page, size, err)
		}
		all = append(all, got...)
		if !more {
			return all
		}
		if len(got) != size {
			t.Fatalf("OwnedRequests(%.20q, page %d of %d): %d states and more", owner, page, size, len(got))
		}
		if page > 100 {
			t.Fatalf("OwnedRequests(%.20q): pages never end", owner)
		}
		after = elicitation.PositionOf(got[len(got)-1])
	}
}

func ids(states []elicitation.State) []string {
	out := make([]string, 0, len(states))
	for _, st := range states {
		out = append(out, st.ID)
	}
	return out
}

func reqIDs(rs []elicitation.Request) []string {
	out := make([]string, 0, len(rs))
	for _, r := range rs {
		out = append(out, r.State.ID)
	}
	return out
}

// sameIDs reports whether got lists want's requests in want's order, where
// the first tie of them (created at one instant) may come in any order.
func sameIDs(got []elicitation.State, want []elicitation.Request, tie int) bool {
	g, w := ids(got), reqIDs(want)
	if len(g) != len(w) {
		return false
	}
	start := -1
	for i := 1; i < len(want); i++ {
		if want[i].State.CreatedAt.Equal(want[i-1].State.CreatedAt) {
			start = i - 1
			break
		}
	}
	sorted := func(s []string) []string {
		c := slices.Clone(s)
		if start >= 0 && start+tie <= len(c) {
			slices.Sort(c[start : start+tie])
		}
		return c
	}
	return slices.Equal(sorted(g), sorted(w))
}
