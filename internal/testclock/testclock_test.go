package testclock_test

import (
	"sync"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/testclock"
)

func TestClockMovesOnlyWhenMoved(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)
	c := testclock.New(t0)
	if got := c.Now(); !got.Equal(t0) {
		t.Fatalf("Now = %v, want %v", got, t0)
	}
	c.Add(90 * time.Second)
	c.Add(-30 * time.Second)
	if got, want := c.Now(), t0.Add(time.Minute); !got.Equal(want) {
		t.Fatalf("after Add: Now = %v, want %v", got, want)
	}
	c.Set(t0)
	if got := c.Now(); !got.Equal(t0) {
		t.Fatalf("after Set: Now = %v, want %v", got, t0)
	}
}

// TestClockConcurrent is for -race: the code under test reads the clock
// from its own goroutines while the test moves it.
func TestClockConcurrent(t *testing.T) {
	t.Parallel()
	c := testclock.New(time.Unix(0, 0))
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(2)
		go func() { defer wg.Done(); c.Add(time.Second) }()
		go func() { defer wg.Done(); _ = c.Now() }()
	}
	wg.Wait()
	if got, want := c.Now(), time.Unix(4, 0); !got.Equal(want) {
		t.Fatalf("Now = %v, want %v", got, want)
	}
}
