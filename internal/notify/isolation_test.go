package notify_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/boltstore"
	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/notify"
)

// hangingHook is a webhook that accepts every request and never answers
// (until the test ends): the target that must not delay anyone else.
type hangingHook struct {
	srv  *httptest.Server
	hits atomic.Int64
	got  chan struct{}      // one per request that arrived
	held chan time.Duration // how long each request was held before its sender gave up
}

func newHangingHook(t *testing.T) *hangingHook {
	h := &hangingHook{got: make(chan struct{}, 10000), held: make(chan time.Duration, 10000)}
	stop := make(chan struct{})
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.hits.Add(1)
		h.got <- struct{}{}
		start := time.Now()
		_, _ = io.Copy(io.Discard, r.Body) // then the server sees the sender drop the connection
		select {
		case <-stop:
		case <-r.Context().Done():
			h.held <- time.Since(start)
		}
	}))
	t.Cleanup(func() { close(stop); h.srv.Close() })
	return h
}

func isolationConfig(stuck, healthy string) notify.Config {
	all := []elicitation.Event{elicitation.EventCreated}
	return notify.Config{Targets: map[string]notify.TargetConfig{
		"stuck": {Type: notify.TypeWebhook, URL: stuck, Secret: hookSecret, Events: all},
		"hook":  {Type: notify.TypeWebhook, URL: healthy, Secret: hookSecret, Events: all},
	}}
}

// isolatedService is a service on a fresh embedded store (closed when t
// ends) notifying isolationConfig's targets, and those targets.
func isolatedService(t *testing.T, stuck, healthy string) (*boltstore.Store, *notify.Targets, *elicitation.Service) {
	t.Helper()
	st, err := boltstore.Open(dbPath(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	targets, err := notify.New(isolationConfig(stuck, healthy), notify.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return st, targets, elicitation.NewService(elicitation.Config{Store: st, Notifications: targets})
}

func createTo(t *testing.T, svc *elicitation.Service, target, msg string) elicitation.Created {
	t.Helper()
	c, err := svc.Create(context.Background(), "alice", elicitation.KindApproval, elicitation.Input{
		Message: msg, Context: json.RawMessage(`1`), TimeoutSeconds: 3600,
		Notify: elicitation.Notify{Targets: []string{target}},
	})

	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestHangingTargetDelaysNobody: with 200 notices queued to a webhook
// that accepts and never answers, the worker of a local server still
// delivers a notice to a healthy webhook (the receiver's arrival is the
// signal; its 20 s wait is only a failure bound, twice one attempt's),
// and the hanging target is rested after RestAfter failures in a row
// instead of being tried 200 times: the worker's lane narrows after the
// first time-out (no attempt starts while the others are out), so the
// target gets one lane's worth of attempts, not a second round before its
// rest.
func TestHangingTargetDelaysNobody(t *testing.T) {
	t.Parallel()
	stuck := newHangingHook(t)
	rc := newReceiver(t)
	s := startServer(t, dbPath(t), isolationConfig(stuck.srv.URL, rc.srv.URL), func(d *notify.Deliverer) { d.Timeout = 3 * time.Second })
	for i := range 200 {
		createTo(t, s.svc, "stuck", fmt.Sprintf("queued %d", i))
	}
	for range notify.PerTarget {
		<-stuck.got // the hanging target's lane is full
	}
	c := createTo(t, s.svc, "hook", "healthy")
	if id := rc.next(t, "the healthy target's notice, behind 200 to a hanging one"); id != elicitation.DeliveryID(c.State.ID, elicitation.EventCreated, "hook") {
		t.Fatalf("healthy receiver got %s", id)
	}
	// A second healthy notice while the hanging target's attempts run out
	// and it rests: still at once.
	c2 := createTo(t, s.svc, "hook", "healthy again")
	if id := rc.next(t, "the second healthy notice"); id != elicitation.DeliveryID(c2.State.ID, elicitation.EventCreated, "hook") {
		t.Fatalf("healthy receiver got %s", id)
	}
	// The lane's attempts time out; by the last one's end the target
	// rests, and any attempt started after the first time-out would have
	// reached the webhook by then.
	for range notify.PerTarget {
		<-stuck.held
	}
	if n := stuck.hits.Load(); n != notify.PerTarget {
		t.Errorf("the hanging target got %d requests before it rested, want one lane's worth (%d)", n, notify.PerTarget)
	}
}

// TestBatchNotHeldByHangingTarget: one batch (a stream batch on Lambda, a
// sweep's round) holding 30 deliveries to a hanging webhook and one to a
// healthy one: the healthy one is delivered, the hanging target is tried
// a lane's worth before it rests (no attempt starts while the first ones
// are still out, so the batch waits for one bound), the rest are left due in the
// outbox (Deferred), and no attempt asks for an immediate retry (a
// time-out backs off even when the caller retries at once, so a stream
// shard is not held again).
func TestBatchNotHeldByHangingTarget(t *testing.T) {
	t.Parallel()
	stuck := newHangingHook(t)
	rc := newReceiver(t)
	st, targets, svc := isolatedService(t, stuck.srv.URL, rc.srv.URL)
	var ds []elicitation.Delivery
	for i := range 30 {
		c := createTo(t, svc, "stuck", fmt.Sprintf("queued %d", i))
		ds = append(ds, elicitation.Delivery{ID: elicitation.DeliveryID(c.State.ID, elicitation.EventCreated, "stuck"), DueAt: c.State.CreatedAt})
	}
	c := createTo(t, svc, "hook", "healthy")
	healthy := elicitation.DeliveryID(c.State.ID, elicitation.EventCreated, "hook")
	ds = append(ds, elicitation.Delivery{ID: healthy, DueAt: c.State.CreatedAt})
	due, err := st.DueDeliveries(context.Background(), time.Now(), 100)
	if err != nil || len(due) != len(ds) {
		t.Fatalf("due = %d, %v; want %d", len(due), err, len(ds))
	}
	d := &notify.Deliverer{Store: st, Targets: targets, Timeout: 3 * time.Second, Log: slog.New(slog.DiscardHandler)}
	outs, errs := d.AttemptAll(context.Background(), due, true)
	count := map[notify.Outcome]int{}
	for i, dl := range due {
		if errs[i] != nil {
			t.Fatalf("%s: %v", dl.ID, errs[i])
		}
		if dl.ID == healthy {
			if outs[i] != notify.Delivered {
				t.Errorf("healthy delivery: %s", outs[i])
			}
			continue
		}
		count[outs[i]]++
	}
	tried := count[notify.Retrying]
	if tried != notify.PerTarget || tried+count[notify.Deferred] != 30 {
		t.Errorf("the hanging target's outcomes = %v; want %d retrying (time-outs that back off: one lane's worth, no second round before it rests), the rest deferred", count, notify.PerTarget)
	}
	if rc.next(t, "the healthy notice") != healthy {
		t.Error("the healthy receiver got another delivery")
	}
	// Resting: the next batch does not try the hanging target at all.
	before := stuck.hits.Load()
	outs, _ = d.AttemptAll(context.Background(), due[:5], true)
	for _, o := range outs {
		if o != notify.Deferred {
			t.Errorf("a resting target's delivery: %s, want deferred", o)
		}
	}
	if n := stuck.hits.Load(); n != before {
		t.Errorf("the resting target got %d more requests", n-before)
	}
}

// TestAttemptBound: a send to a webhook that accepts and never answers is
// given up at its bound, seen at the webhook (the request's context ends
// when the deliverer drops it): a stream batch's at StreamAttemptTimeout,
// or sooner if Timeout is shorter; the sweep's at the full Timeout. The
// checks are bounds on a hang that would otherwise last the full bound,
// not a measure of speed.
func TestAttemptBound(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		timeout time.Duration
		stream  bool
		want    time.Duration
	}{
		{"a stream batch's, default Timeout", 0, true, notify.StreamAttemptTimeout},
		{"a stream batch's, a shorter Timeout", notify.StreamAttemptTimeout / 4, true, notify.StreamAttemptTimeout / 4},
		{"the sweep's keeps Timeout", 3 * notify.StreamAttemptTimeout, false, 3 * notify.StreamAttemptTimeout},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			stuck := newHangingHook(t)
			st, targets, svc := isolatedService(t, stuck.srv.URL, stuck.srv.URL)
			c := createTo(t, svc, "stuck", "hangs")
			dl := elicitation.Delivery{ID: elicitation.DeliveryID(c.State.ID, elicitation.EventCreated, "stuck"), DueAt: c.State.CreatedAt}
			d := &notify.Deliverer{Store: st, Targets: targets, Timeout: tc.timeout, Log: slog.New(slog.DiscardHandler)}
			outs, errs := d.AttemptAll(context.Background(), []elicitation.Delivery{dl}, tc.stream)
			if errs[0] != nil || outs[0] != notify.Retrying {
				t.Errorf("outcome %s, %v; want %s", outs[0], errs[0], notify.Retrying)
			}
			select {
			case held := <-stuck.held:
				if held < tc.want/2 || held > tc.want+3*time.Second {
					t.Errorf("the webhook held the request %s; want it dropped at the bound, %s", held, tc.want)
				}
			case <-time.After(notify.AttemptTimeout + 5*time.Second):
				t.Fatal("the webhook's request never ended")
			}
		})
	}
}
