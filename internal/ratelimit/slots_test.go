package ratelimit_test

import (
	"testing"

	"github.com/mcp-elicitation/elicitation/internal/ratelimit"
)

// TestSlots: a principal holds up to its share, all up to the max, a
// refusal takes nothing, and a release gives back one slot however often
// it is called.
func TestSlots(t *testing.T) {
	t.Parallel()
	w := ratelimit.NewSlots(3, 2)
	a1, ok1 := w.Hold("a")
	_, ok2 := w.Hold("a")
	_, ok3 := w.Hold("a") // a's share
	_, ok4 := w.Hold("b")
	_, ok5 := w.Hold("c") // the max
	if !ok1 || !ok2 || ok3 || !ok4 || ok5 {
		t.Fatalf("holds a, a, a, b, c: %v %v %v %v %v, want true true false true false", ok1, ok2, ok3, ok4, ok5)
	}
	if mine, total := w.Held("a"); mine != 2 || total != 3 {
		t.Fatalf("held: a %d of %d, want 2 of 3", mine, total)
	}
	a1()
	a1()
	if mine, total := w.Held("a"); mine != 1 || total != 2 {
		t.Fatalf("after one release called twice: a %d of %d, want 1 of 2", mine, total)
	}
	if _, ok := w.Hold("c"); !ok {
		t.Fatal("c refused with a slot free")
	}
	if got := ratelimit.NewSlots(5, 0).Share(); got != 5 {
		t.Errorf("no share under a max of 5: share %d, want 5", got)
	}
	var none ratelimit.Slots
	for range 100 {
		if _, ok := none.Hold("a"); !ok {
			t.Fatal("the zero Slots refused a hold")
		}
	}
}
