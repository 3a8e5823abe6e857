package elicitation_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// pollingStore is a store that reports the interval each watch asks a
// store that polls to read at, once every watch has registered.
type pollingStore struct {
	elicitation.Store
	started  chan struct{}
	release  chan struct{}
	interval chan time.Duration
}

func (p *pollingStore) Watch(id string, every func() time.Duration, wake func()) func() {
	stop := p.Store.Watch(id, every, wake)
	p.started <- struct{}{}
	<-p.release
	p.interval <- every()
	return stop
}

// TestWatch: a watch ends with the decision, whatever made it; it asks a
// store that polls to read at least every WatchPoll, and all watches
// together at most WatchReadsPerSecond times a second; a request past its
// expiry is reported expired at once.
func TestWatch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, c, bolt := newService(t)
	const watches = 400 // 400 / 20 reads a second: each reads every 20 s
	ps := &pollingStore{Store: bolt, started: make(chan struct{}), release: make(chan struct{}), interval: make(chan time.Duration, watches)}
	svc := elicitation.NewService(elicitation.Config{Store: ps, Now: c.Now})
	cr, err := svc.Create(ctx, "alice", elicitation.KindApproval, elicitation.Input{Message: "m", Context: json.RawMessage(`1`)})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan elicitation.Status, watches)
	for range watches {
		go func() {
			st, err := svc.Watch(ctx, "alice", cr.State.ID)
			if err != nil {
				t.Error(err)
			}
			done <- st.Status
		}()
	}
	for range watches {
		<-ps.started
	}
	close(ps.release)
	for range watches {
		if d := <-ps.interval; d != watches*time.Second/elicitation.WatchReadsPerSecond {
			t.Fatalf("a watch among %d reads every %v, want %v", watches, d, watches*time.Second/elicitation.WatchReadsPerSecond)
		}
	}
	if _, err := svc.Submit(ctx, cr.State.ID, cr.ReviewKey, elicitation.Submission{ID: "s", Decision: elicitation.DecisionSubmitted}); err != nil {
		t.Fatal(err)
	}
	for range watches {
		select {
		case st := <-done:
			if st != elicitation.StatusSubmitted {
				t.Fatalf("watch ended %s", st)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("a watch did not end with the decision")
		}
	}

	// One watch alone reads every WatchPoll.
	ps.started, ps.release = make(chan struct{}, 1), make(chan struct{})
	close(ps.release)
	cr2, err := svc.Create(ctx, "alice", elicitation.KindApproval, elicitation.Input{Message: "m", Context: json.RawMessage(`1`), TimeoutSeconds: 120})
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithCancel(ctx)
	go func() {
		if d := <-ps.interval; d != elicitation.WatchPoll {
			t.Errorf("a lone watch reads every %v, want %v", d, elicitation.WatchPoll)
		}
		cancel()
	}()
	if _, err := svc.Watch(wctx, "alice", cr2.State.ID); err == nil {
		t.Error("a canceled watch reported no error")
	}

	// Past its expiry: expired at once, without waiting.
	c.Add(2 * time.Minute)
	if st, err := svc.Watch(ctx, "alice", cr2.State.ID); err != nil || st.Status != elicitation.StatusExpired {
		t.Errorf("watch past expiry: %s, %v", st.Status, err)
	}
}
