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
