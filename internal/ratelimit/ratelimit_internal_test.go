package ratelimit

import (
	"strconv"
	"testing"
	"time"
)

// One source's flood spends its own bucket; another source still gets
// through; the global bucket bounds everyone; at most max sources are
// tracked; a refusal spends nothing and says how long to wait.
func TestLimiter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	l := New(Rate{Count: 3, Per: time.Hour}, Rate{Count: 10, Per: time.Hour}, 4)
	for i := range 3 {
		if d := l.Take("flood", now); d != 0 {
			t.Fatalf("take %d of the flooding source: wait %v", i, d)
		}
	}
	d := l.Take("flood", now)
	if d <= 0 || d > 20*time.Minute+time.Second {
		t.Fatalf("the fourth take of a 3-per-hour source: wait %v, want about 20 minutes", d)
	}
	if d := l.Take("other", now); d != 0 {
		t.Fatalf("another source after a flood: wait %v", d)
	}
	allowed := 0
	for i := range 20 {
		if l.Take("s"+strconv.Itoa(i), now) == 0 {
			allowed++
		}
	}
	if allowed != 10-4 {
		t.Errorf("%d of 20 new sources let through, want the 6 left of the global 10", allowed)
	}
	if d := l.Take("flood", now.Add(20*time.Minute+time.Second)); d != 0 {
		t.Fatalf("the flooding source after its wait: wait %v", d)
	}
	if n := len(l.sources); n > 4 {
		t.Errorf("%d sources tracked, want at most 4", n)
	}
}

// TakeN spends n events or none: a batch past what is left waits, spends
// nothing (a single event still goes), and one larger than a bucket never
// goes; the global bucket counts events, not calls.
func TestTakeN(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name  string
		takes []int // by source "a", in order
		want  []bool
	}{
		{"whole batches", []int{5, 5}, []bool{true, true}},
		{"past what is left", []int{8, 5, 2}, []bool{true, false, true}},
		{"larger than the bucket", []int{11, 1}, []bool{false, true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			l := New(Rate{Count: 10, Per: time.Hour}, Rate{Count: 12, Per: time.Hour}, 4)
			for i, n := range tc.takes {
				if got := l.TakeN("a", n, now) == 0; got != tc.want[i] {
					t.Fatalf("take %d of %d: allowed %t, want %t", i, n, got, tc.want[i])
				}
			}
		})
	}
	l := New(Rate{Count: 10, Per: time.Hour}, Rate{Count: 12, Per: time.Hour}, 4)
	if l.TakeN("a", 10, now) != 0 || l.TakeN("b", 3, now) == 0 || l.TakeN("b", 2, now) != 0 {
		t.Error("the global bucket does not count the events of a batch")
	}
}

// TakeFor counts one event against the source, the client it names
// (PerClient, at its own rate) and in all: any one refusing spends
// nothing of the others. With the client's rate above the source's, one
// source cannot spend a client's bucket; several can.
func TestTakeFor(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	l := New(Rate{Count: 2, Per: time.Hour}, Rate{Count: 100, Per: time.Hour}, 100).PerClient(Rate{Count: 3, Per: time.Hour})
	for _, tc := range []struct {
		source, client string
		allowed        bool
	}{
		{"a", "x", true},
		{"a", "x", true},
		{"a", "x", false}, // a's bound; x keeps one
		{"b", "x", true},  // x's third
		{"c", "x", false}, // x's bound; c spends nothing
		{"c", "y", true},
		{"c", "y", true},
		{"c", "", false}, // c's bound
		{"d", "", true},  // no client: the source's bound alone
	} {
		if got := l.TakeFor(tc.source, tc.client, now) == 0; got != tc.allowed {
			t.Fatalf("%s for client %q: allowed %v, want %v", tc.source, tc.client, got, tc.allowed)
		}
	}
	if got := l.global.TokensAt(now); got != 100-6 {
		t.Errorf("global bucket holds %v, want 94 (refusals spend nothing)", got)
	}
}

// Spend says which bound refused: the source's own, or everyone's when
// the source still has room.
func TestSpendBound(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	l := New(Rate{Count: 2, Per: time.Hour}, Rate{Count: 3, Per: time.Hour}, 10)
	for i, tc := range []struct {
		source string
		want   Bound
	}{{"a", 0}, {"a", 0}, {"a", BySource}, {"b", 0}, {"b", InAll}} {
		if _, got := l.Spend(tc.source, now); got != tc.want {
			t.Fatalf("spend %d by %s: bound %d, want %d", i, tc.source, got, tc.want)
		}
	}
}
