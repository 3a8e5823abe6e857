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
