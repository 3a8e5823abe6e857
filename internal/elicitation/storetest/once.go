package storetest

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// testAppendOnce: a mark is recorded once per request, whoever races for
// it through whichever handle, and goes with the request.
func testAppendOnce(t *testing.T, open Factory) {
	ctx := ctxT(t)
	a, b := open(t)
	r := NewApproval(t, time.Minute)
	mustCreate(t, a, r)
	id := r.State.ID
	entry := func(who, detail string) elicitation.AuditEntry {
		return elicitation.AuditEntry{At: T0.Add(time.Second), Action: elicitation.ActionPushed, Principal: who, Detail: detail}
	}
	count := func(h elicitation.Store, detail string) int {
		t.Helper()
		tr, err := h.Audit(ctx, id)
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

	t.Run("first wins, the second is refused", func(t *testing.T) {
		first, err := a.AppendOnce(ctx, id, "pushed\x00alice", entry("alice", "first"))
		if err != nil || !first {
			t.Fatalf("first AppendOnce = %v, %v; want true", first, err)
		}
		for i, h := range []elicitation.Store{a, b} {
			again, err := h.AppendOnce(ctx, id, "pushed\x00alice", entry("alice", "second"))
			if err != nil || again {
				t.Fatalf("repeat %d = %v, %v; want false", i, again, err)
			}
		}
		if n, m := count(b, "first"), count(b, "second"); n != 1 || m != 0 {
			t.Errorf("trail holds %d first and %d second entries; want 1 and 0", n, m)
		}
		// The marks are not entries.
		tr, _ := a.Audit(ctx, id)
		wantActions(t, tr, elicitation.ActionCreated, elicitation.ActionPushed)
	})

	t.Run("marks of different principals are independent", func(t *testing.T) {
		for _, mark := range []string{"pushed\x00bob", "pushed\x00alice\x00ref-1", "pushed\x00alice\x00ref-2"} {
			first, err := b.AppendOnce(ctx, id, mark, entry("bob", mark))
			if err != nil || !first {
				t.Fatalf("AppendOnce %q = %v, %v; want true", mark, first, err)
			}
		}
		// The same mark on another request is another mark.
		other := NewApproval(t, time.Minute)
		mustCreate(t, b, other)
		if first, err := a.AppendOnce(ctx, other.State.ID, "pushed\x00alice", entry("alice", "other")); err != nil || !first {
			t.Fatalf("AppendOnce on another request = %v, %v; want true", first, err)
		}
	})

	t.Run("one of 20 racers through two handles", func(t *testing.T) {
		rounds := 3
		if testing.Short() {
			rounds = 1
		}
		for round := range rounds {
			mark := fmt.Sprint("race-", round)
			var wins atomic.Int32
			var wg sync.WaitGroup
			start := make(chan struct{})
			errs := make([]error, 20)
			for i := range errs {
				h := a
				if i%2 == 1 {
					h = b
				}
				wg.Go(func() {
					<-start
					first, err := h.AppendOnce(ctx, id, mark, entry("alice", mark))
					if first {
						wins.Add(1)
					}
					errs[i] = err
				})
			}
			close(start)
			wg.Wait()
			for i, err := range errs {
				if err != nil {
					t.Fatalf("round %d: racer %d: %v", round, i, err)
				}
			}
			if n := wins.Load(); n != 1 {
				t.Fatalf("round %d: %d racers were first, want exactly 1", round, n)
			}
			if n := count(a, mark); n != 1 {
				t.Fatalf("round %d: %d entries stored, want 1", round, n)
			}
		}
	})

	t.Run("unknown request", func(t *testing.T) {
		first, err := a.AppendOnce(ctx, elicitation.NewID(), "pushed\x00alice", entry("alice", "x"))
		wantErr(t, "AppendOnce on an unknown request", err, elicitation.ErrNotFound)
		if first {
			t.Error("AppendOnce on an unknown request reported first")
		}
	})

	t.Run("removed with the request", func(t *testing.T) {
		if _, err := b.Cleanup(ctx, r.State.RetainUntil.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		first, err := a.AppendOnce(ctx, id, "pushed\x00alice", entry("alice", "gone"))
		wantErr(t, "AppendOnce after cleanup", err, elicitation.ErrNotFound)
		if first {
			t.Error("AppendOnce after cleanup reported first")
		}
		// A request created again under the same id starts without marks.
		mustCreate(t, a, r)
		if first, err := b.AppendOnce(ctx, id, "pushed\x00alice", entry("alice", "anew")); err != nil || !first {
			t.Errorf("AppendOnce on the re-created request = %v, %v; want true (the old mark should be gone)", first, err)
		}
	})
}
