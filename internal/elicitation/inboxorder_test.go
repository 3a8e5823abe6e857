package elicitation

import (
	"slices"
	"testing"
	"time"
)

// TestSortTies: entries listed by expiry come out in InboxCursor's order
// whatever order a store gave the ties in (DynamoDB's between equal sort
// keys is its own); entries that do not tie keep their places.
func TestSortTies(t *testing.T) {
	t.Parallel()
	at := func(s int) time.Time { return time.Date(2026, 5, 1, 12, 0, s, 0, time.UTC) }
	e := func(s int, id string) InboxEntry { return InboxEntry{ID: id, ExpiresAt: at(s)} }
	for _, tc := range []struct {
		name string
		in   []InboxEntry
	}{
		{"empty", nil},
		{"one", []InboxEntry{e(1, "b")}},
		{"no ties", []InboxEntry{e(1, "c"), e(2, "b"), e(3, "a")}},
		{"ties reversed", []InboxEntry{e(1, "c"), e(1, "b"), e(1, "a")}},
		{"ties among others", []InboxEntry{e(0, "z"), e(1, "q"), e(1, "a"), e(1, "m"), e(2, "b"), e(3, "y"), e(3, "x")}},
		{"same instant, other zones", []InboxEntry{{ID: "b", ExpiresAt: at(1)}, {ID: "a", ExpiresAt: at(1).In(time.FixedZone("x", 3600))}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := slices.Clone(tc.in)
			sortTies(got)
			want := slices.Clone(tc.in)
			slices.SortStableFunc(want, func(a, b InboxEntry) int { return a.Cursor().Compare(b.Cursor()) })
			if !slices.EqualFunc(got, want, func(a, b InboxEntry) bool { return a.ID == b.ID }) {
				t.Errorf("sortTies: %v, want %v", ids(got), ids(want))
			}
		})
	}
}

func ids(es []InboxEntry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.ID)
	}
	return out
}

// TestInboxPage: the page inboxPage finds is, for every small listing,
// limit and place (on a row or between two), the one a plain scan finds:
// after a place, the first limit rows past it; before one, the last limit
// rows ahead of it, or the first page when none is ahead any more.
func TestInboxPage(t *testing.T) {
	t.Parallel()
	at := func(s int) time.Time { return time.Date(2026, 5, 1, 12, 0, s, 0, time.UTC) }
	for n := range 7 {
		cursors := make([]InboxCursor, n)
		for i := range cursors {
			cursors[i] = InboxCursor{ExpiresAt: at(2 * i), ID: "r"}
		}
		cursor := func(i int) InboxCursor { return cursors[i] }
		var places []InboxCursor // on each row and between and around them
		for s := -1; s <= 2*n; s++ {
			places = append(places, InboxCursor{ExpiresAt: at(s), ID: "r"})
		}
		for limit := 1; limit <= 3; limit++ {
			for _, p := range places {
				var past []int
				for i, c := range cursors {
					if c.Compare(p) > 0 {
						past = append(past, i)
					}
				}
				wantAfter := past[:min(limit, len(past))]
				// Before p: the rows strictly ahead of it.
				var before []int
				for i, c := range cursors {
					if c.Compare(p) < 0 {
						before = append(before, i)
					}
				}
				wantBefore := before[max(len(before)-limit, 0):]
				if len(before) == 0 {
					wantBefore = seq(min(limit, n))
				}
				for _, tc := range []struct {
					f    InboxFilter
					want []int
				}{{InboxFilter{After: p}, wantAfter}, {InboxFilter{Before: p}, wantBefore}} {
					start, end := inboxPage(n, limit, tc.f, cursor)
					if got := seq(end)[start:]; !slices.Equal(got, tc.want) && !(len(got) == 0 && len(tc.want) == 0) {
						t.Errorf("n %d, limit %d, %+v: rows %v, want %v", n, limit, tc.f, got, tc.want)
					}
				}
			}
		}
	}
}

func seq(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}
