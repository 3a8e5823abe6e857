package storetest

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// testAppendOnce: a mark is recorded once per request, whoever races for
// it through whichever handle, and goes with the request.
func testAppendOnce(t *testing.T, open Factory) {
	c := onceCase{ctx: ctxT(t), r: NewApproval(t, time.Minute)}
	c.a, c.b = open(t)
	mustCreate(t, c.a, c.r)
	c.id = c.r.State.ID
	t.Run("first wins, the second is refused", func(t *testing.T) { onceFirstWins(t, c) })
	t.Run("marks of different principals are independent", func(t *testing.T) { onceMarksIndependent(t, c) })
	t.Run("one of 20 racers through two handles", func(t *testing.T) { onceRacers(t, c) })
	t.Run("unknown request", func(t *testing.T) { onceUnknownRequest(t, c) })
	t.Run("removed with the request", func(t *testing.T) { onceRemovedWithRequest(t, c) })
}

// onceCase is one request of testAppendOnce, seen through both handles.
type onceCase struct {
	ctx  context.Context
	a, b elicitation.Store
	r    elicitation.Request
	id   string
}

func (c onceCase) entry(who, detail string) elicitation.AuditEntry {
	return elicitation.AuditEntry{At: T0.Add(time.Second), Action: elicitation.ActionPushed, Principal: who, Detail: detail}
}

// count is the number of entries in the request's trail with detail.
func (c onceCase) count(t *testing.T, h elicitation.Store, detail string) int {
	t.Helper()
	tr, err := h.Audit(c.ctx, c.id)
	if err != nil {
		t.Fatalf("Audit: %v", err)
	}
	n := 0
	for _, e := range tr.Entries {
		if e.Detail == detail {
			n++
		}
	}
	return n
}

// onceFirstWins is testAppendOnce's case "first wins, the second is refused".
func onceFirstWins(t *testing.T, c onceCase) {
	ctx, a, b, id := c.ctx, c.a, c.b, c.id
	first, err := a.AppendOnce(ctx, id, "pushed\x00alice", c.entry("alice", "first"))
	if err != nil || !first {
		t.Fatalf("first AppendOnce = %v, %v; want true", first, err)
	}
	for i, h := range []elicitation.Store{a, b} {
		again, err := h.AppendOnce(ctx, id, "pushed\x00alice", c.entry("alice", "second"))
		if err != nil || again {
			t.Fatalf("repeat %d = %v, %v; want false", i, again, err)
		}
	}
	if n, m := c.count(t, b, "first"), c.count(t, b, "second"); n != 1 || m != 0 {
		t.Errorf("trail holds %d first and %d second entries; want 1 and 0", n, m)
	}
	// The marks are not entries.
	tr, _ := a.Audit(ctx, id)
	wantActions(t, tr, elicitation.ActionCreated, elicitation.ActionPushed)
}

// onceMarksIndependent is testAppendOnce's case "marks of different principals are independent".
func onceMarksIndependent(t *testing.T, c onceCase) {
	ctx, a, b, id := c.ctx, c.a, c.b, c.id
	for _, mark := range []string{"pushed\x00bob", "pushed\x00alice\x00ref-1", "pushed\x00alice\x00ref-2"} {
		first, err := b.AppendOnce(ctx, id, mark, c.entry("bob", mark))
		if err != nil || !first {
			t.Fatalf("AppendOnce %q = %v, %v; want true", mark, first, err)
		}
	}
	// The same mark on another request is another mark.
	other := NewApproval(t, time.Minute)
	mustCreate(t, b, other)
	if first, err := a.AppendOnce(ctx, other.State.ID, "pushed\x00alice", c.entry("alice", "other")); err != nil || !first {
		t.Fatalf("AppendOnce on another request = %v, %v; want true", first, err)
	}
}

// onceRacers is testAppendOnce's case "one of 20 racers through two handles".
func onceRacers(t *testing.T, c onceCase) {
	ctx, a, b, id := c.ctx, c.a, c.b, c.id
	rounds := 3
	if testing.Short() {
		rounds = 1
	}
	for round := range rounds {
		mark := fmt.Sprint("race-", round)
		var wins atomic.Int32
		errs := race(20, a, b, func(_ int, h elicitation.Store) error {
			first, err := h.AppendOnce(ctx, id, mark, c.entry("alice", mark))
			if first {
				wins.Add(1)
			}
			return err
		})
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d: racer %d: %v", round, i, err)
			}
		}
		if n := wins.Load(); n != 1 {
			t.Fatalf("round %d: %d racers were first, want exactly 1", round, n)
		}
		if n := c.count(t, a, mark); n != 1 {
			t.Fatalf("round %d: %d entries stored, want 1", round, n)
		}
	}
}

// onceUnknownRequest is testAppendOnce's case "unknown request".
func onceUnknownRequest(t *testing.T, c onceCase) {
	ctx, a := c.ctx, c.a
	first, err := a.AppendOnce(ctx, elicitation.NewID(), "pushed\x00alice", c.entry("alice", "x"))
	wantErr(t, "AppendOnce on an unknown request", err, elicitation.ErrNotFound)
	if first {
		t.Error("AppendOnce on an unknown request reported first")
	}
}

// onceRemovedWithRequest is testAppendOnce's case "removed with the request".
func onceRemovedWithRequest(t *testing.T, c onceCase) {
	ctx, a, b, id, r := c.ctx, c.a, c.b, c.id, c.r
	if _, err := b.Cleanup(ctx, r.State.RetainUntil.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	first, err := a.AppendOnce(ctx, id, "pushed\x00alice", c.entry("alice", "gone"))
	wantErr(t, "AppendOnce after cleanup", err, elicitation.ErrNotFound)
	if first {
		t.Error("AppendOnce after cleanup reported first")
	}
	// A request created again under the same id starts without marks.
	mustCreate(t, a, r)
	if first, err := b.AppendOnce(ctx, id, "pushed\x00alice", c.entry("alice", "anew")); err != nil || !first {
		t.Errorf("AppendOnce on the re-created request = %v, %v; want true (the old mark should be gone)", first, err)
	}
}
