package notify_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/notify"
)

// sends is a notify.Observer that counts what it is told.
type sends struct {
	mu  sync.Mutex
	got map[string]int
}

func (s *sends) Notified(targetType string, delivered bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := targetType + map[bool]string{true: " sent", false: " failed"}[delivered]
	s.got[k]++
}

// TestDelivererTellsTheObserver: each send's outcome reaches the
// Deliverer's Observer by the target's type, a failure as failed and the
// retry that gets through as sent; a delivery dropped without a send is
// not told.
func TestDelivererTellsTheObserver(t *testing.T) {
	t.Parallel()
	var fail atomic.Bool
	fail.Store(true)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if fail.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	st, svc, d, clk := deliveryRig(t, webhookConfig(srv.URL))
	obs := &sends{got: map[string]int{}}
	d.Observer = obs
	ctx := context.Background()
	if _, err := svc.Create(ctx, "alice", elicitation.KindApproval, elicitation.Input{Message: "m", Context: json.RawMessage(`1`), TimeoutSeconds: 3600}); err != nil {
		t.Fatal(err)
	}
	if n, err := d.DeliverDue(ctx); err != nil || n != 1 {
		t.Fatalf("first attempt: %d, %v", n, err)
	}
	fail.Store(false)
	clk.Add(notify.DefaultBackoff(1))
	if due, err := st.DueDeliveries(ctx, clk.Now(), 10); err != nil || len(due) != 1 {
		t.Fatalf("due after the backoff: %v, %v", due, err)
	}
	if n, err := d.DeliverDue(ctx); err != nil || n != 1 {
		t.Fatalf("the retry: %d, %v", n, err)
	}
	obs.mu.Lock()
	defer obs.mu.Unlock()
	if obs.got["webhook failed"] != 1 || obs.got["webhook sent"] != 1 || len(obs.got) != 2 {
		t.Errorf("observed %v, want one webhook failure and one send", obs.got)
	}
}
