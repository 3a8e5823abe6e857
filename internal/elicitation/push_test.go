package elicitation_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/boltstore"
	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// TestRecordPushOnce: of many first pushes (or many retries carrying one
// request state) racing through two services, exactly one is recorded and
// told it is the first; each principal, and each request state, has its own.
func TestRecordPushOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	now := func() time.Time { return time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC) }
	var svcs []*elicitation.Service
	for range 2 {
		st, err := boltstore.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		svcs = append(svcs, elicitation.NewService(elicitation.Config{Store: st, Now: now, MaxWait: 5 * time.Second}))
	}
	cr, err := svcs[0].Create(ctx, "alice", elicitation.KindApproval, elicitation.Input{Message: "m", Context: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	id := cr.State.ID

	race := func(what string, record func(*elicitation.Service) (bool, error)) {
		t.Helper()
		var wins atomic.Int32
		var wg sync.WaitGroup
		start := make(chan struct{})
		errs := make([]error, 20)
		for i := range errs {
			wg.Go(func() {
				<-start
				first, err := record(svcs[i%2])
				if first {
					wins.Add(1)
				}
				errs[i] = err
			})
		}
		close(start)
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if n := wins.Load(); n != 1 {
			t.Errorf("%s: %d of 20 racers were first, want exactly 1", what, n)
		}
	}
	race("push", func(s *elicitation.Service) (bool, error) { return s.RecordPush(ctx, "alice", id, "url elicitation") })
	race("answer of state A", func(s *elicitation.Service) (bool, error) { return s.RecordPushAnswer(ctx, "alice", id, "state A") })
	race("answer of state B", func(s *elicitation.Service) (bool, error) { return s.RecordPushAnswer(ctx, "alice", id, "state B") })
	if first, err := svcs[1].RecordPush(ctx, "alice", id, "on the session"); err != nil || first {
		t.Errorf("a push by other means after the first = %v, %v; want false", first, err)
	}
	// Another principal is not the request's owner: nothing to push.
	if first, err := svcs[0].RecordPush(ctx, "bob", id, "url elicitation"); !errors.Is(err, elicitation.ErrNotFound) || first {
		t.Errorf("bob's push = %v, %v; want ErrNotFound", first, err)
	}

	tr, err := svcs[1].OperatorAudit(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, e := range tr.Entries {
		got[fmt.Sprint(e.Action, " ", e.Principal, " ", e.Detail)]++
	}
	want := map[string]int{
		"created alice approval":       1,
		"pushed alice url elicitation": 1,
		"push_answered alice state A":  1,
		"push_answered alice state B":  1,
	}
	for k, n := range want {
		if got[k] != n {
			t.Errorf("audit: %d × %q, want %d; trail %v", got[k], k, n, got)
		}
	}
	if len(tr.Entries) != 4 {
		t.Errorf("audit has %d entries, want 4: %v", len(tr.Entries), got)
	}
}
