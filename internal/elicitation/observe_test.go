package elicitation_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/boltstore"
	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/testclock"
)

// recorder is an Observer that writes down what it is told.
type recorder struct {
	mu     sync.Mutex
	events []string
}

func (r *recorder) add(what string, st elicitation.State) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, what+" "+st.ID)
}
func (r *recorder) Created(st elicitation.State) { r.add("created", st) }
func (r *recorder) Resolved(st elicitation.State) {
	r.add("resolved:"+string(st.Status), st)
}
func (r *recorder) Expired(st elicitation.State) { r.add("expired", st) }

func (r *recorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.events
	r.events = nil
	return out
}

// TestObserverHearsEachEventOnce: the observer hears of a creation, a
// decision and a cancel once each, whatever the retries (the same page
// sent again, a second cancel), and of an expiry once however many sweeps
// notice it, never of a request that was decided; Open counts a wait while
// it lasts.
func TestObserverHearsEachEventOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, err := boltstore.Open(filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	c := testclock.New(time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC))
	rec := &recorder{}
	svc := elicitation.NewService(elicitation.Config{Store: st, Now: c.Now, Observer: rec})
	in := elicitation.Input{Message: "Ship?", Context: json.RawMessage(`1`), TimeoutSeconds: 60}
	decided, err := svc.Create(ctx, "ci", elicitation.KindApproval, in)
	if err != nil {
		t.Fatal(err)
	}
	canceled, _ := svc.Create(ctx, "ci", elicitation.KindApproval, in)
	expired, _ := svc.Create(ctx, "ci", elicitation.KindApproval, in)
	d, cn, ex := decided.State.ID, canceled.State.ID, expired.State.ID
	if got := rec.take(); len(got) != 3 || got[0] != "created "+d {
		t.Fatalf("after three creates: %q", got)
	}

	sub := elicitation.Submission{ID: "page-1", Decision: elicitation.DecisionSubmitted}
	for range 2 { // the second is the same page sent again
		if _, err := svc.Submit(ctx, d, decided.ReviewKey, sub); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		if _, err := svc.Cancel(ctx, "ci", cn); err != nil {
			t.Fatal(err)
		}
	}
	if got := rec.take(); len(got) != 2 || got[0] != "resolved:submitted "+d || got[1] != "resolved:canceled "+cn {
		t.Fatalf("after a decision and a cancel, each sent twice: %q", got)
	}

	since := c.Now()
	if n, err := svc.NoticeExpired(ctx, since); err != nil || n != 0 {
		t.Fatalf("a sweep before the expiry: %d, %v", n, err)
	}
	c.Add(61 * time.Second)
	for i := range 3 {
		n, err := svc.NoticeExpired(ctx, since)
		if err != nil || n != map[bool]int{true: 1}[i == 0] {
			t.Fatalf("sweep %d: %d, %v", i, n, err)
		}
	}
	if got := rec.take(); len(got) != 1 || got[0] != "expired "+ex {
		t.Fatalf("after three sweeps: %q", got)
	}
	tr, err := svc.OperatorAudit(ctx, ex)
	if err != nil || tr.Entries[len(tr.Entries)-1].Action != elicitation.ActionExpired || tr.Entries[len(tr.Entries)-1].Principal != elicitation.Clock {
		t.Fatalf("the expired request's trail: %+v, %v", tr.Entries, err)
	}

	// A wait is counted while it lasts.
	pending, _ := svc.Create(ctx, "ci", elicitation.KindApproval, in)
	done := make(chan struct{})
	svc.AwaitFunc(ctx, "ci", pending.State.ID, time.Minute, func(elicitation.State, error) { close(done) })
	if o := svc.Open(); o.Waits != 1 || o.Watches != 0 {
		t.Errorf("during a wait: %+v", o)
	}
	if _, err := svc.Cancel(ctx, "ci", pending.State.ID); err != nil {
		t.Fatal(err)
	}
	<-done
	if o := svc.Open(); o.Waits != 0 {
		t.Errorf("after the wait: %+v", o)
	}
}
