package gate

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

// The pending table's bounds refuse a review past them and never make
// room by forgetting another client's: a client at its own bound is
// refused (own), a full table refuses a new client (not own) and keeps
// every entry, and a place comes back when an entry expires, is claimed,
// or asking failed (before, a full table forgot its oldest entry,
// whichever client's it was).
func TestPendingTableBounds(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_000_000, 0)
	// fill reserves and puts n entries of principal, expiring at exp.
	fill := func(t *testing.T, tb *pendingTable, principal string, n int, exp time.Time) {
		t.Helper()
		for i := range n {
			if err := tb.reserve(principal, now); err != nil {
				t.Fatalf("%s's entry %d: %v", principal, i, err)
			}
			tb.put(fmt.Sprintf("%s/%d", principal, i), &pendingEntry{principal: principal, expires: exp})
		}
	}
	later := now.Add(time.Hour)
	for _, tc := range []struct {
		name string
		run  func(t *testing.T, tb *pendingTable) (principal string, want *tooManyReviews)
	}{
		{"a client at its bound", func(t *testing.T, tb *pendingTable) (string, *tooManyReviews) {
			fill(t, tb, "a", maxPendingPerClient, later)
			return "a", &tooManyReviews{own: true, limit: maxPendingPerClient}
		}},
		{"another client beside one at its bound", func(t *testing.T, tb *pendingTable) (string, *tooManyReviews) {
			fill(t, tb, "a", maxPendingPerClient, later)
			return "b", nil
		}},
		{"a new client when the table is full", func(t *testing.T, tb *pendingTable) (string, *tooManyReviews) {
			for i := range maxPending / maxPendingPerClient {
				fill(t, tb, fmt.Sprint("client ", i), maxPendingPerClient, later)
			}
			return "new", &tooManyReviews{limit: maxPending}
		}},
		{"a client whose entries expired", func(t *testing.T, tb *pendingTable) (string, *tooManyReviews) {
			fill(t, tb, "a", maxPendingPerClient, now)
			return "a", nil
		}},
		{"a client whose entry was claimed", func(t *testing.T, tb *pendingTable) (string, *tooManyReviews) {
			fill(t, tb, "a", maxPendingPerClient, later)
			if !tb.claim("a/0", tb.entries["a/0"]) {
				t.Fatal("the entry was not claimed")
			}
			return "a", nil
		}},
		{"a client whose asking failed", func(t *testing.T, tb *pendingTable) (string, *tooManyReviews) {
			fill(t, tb, "a", maxPendingPerClient-1, later)
			if err := tb.reserve("a", now); err != nil {
				t.Fatal(err)
			}
			tb.release("a")
			return "a", nil
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tb := &pendingTable{}
			principal, want := tc.run(t, tb)
			before := len(tb.entries)
			err := tb.reserve(principal, now)
			var got *tooManyReviews
			errors.As(err, &got)
			if (want == nil && err != nil) || (want != nil && (got == nil || *got != *want)) {
				t.Fatalf("reserve for %s: %v, want %+v", principal, err, want)
			}
			if want != nil && len(tb.entries) != before {
				t.Errorf("the refusal forgot entries: %d, were %d", len(tb.entries), before)
			}
		})
	}
}
