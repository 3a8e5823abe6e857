package notify_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/boltstore"
	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/notify"
	"github.com/mcp-elicitation/elicitation/internal/testclock"
)

const hookSecret = "whsec-test-0123456789abcdef"

// receiver is a real webhook receiver: it verifies every signature, drops
// repeats by delivery id, and counts the deliveries it accepted per
// event. respond decides each attempt's answer (after the check).
type receiver struct {
	t   *testing.T
	srv *httptest.Server

	mu       sync.Mutex
	attempts map[string]int                 // delivery id -> attempts seen
	accepted map[elicitation.Event][]string // event -> delivery ids accepted (each once)
	notices  map[string]elicitation.Notice
	bad      int
	seen     chan string // delivery id of every attempt, after the check
	respond  func(w http.ResponseWriter, n elicitation.Notice, attempt int) (accept bool)
}

func newReceiver(t *testing.T) *receiver {
	rc := &receiver{t: t, attempts: map[string]int{}, accepted: map[elicitation.Event][]string{}, notices: map[string]elicitation.Notice{}, seen: make(chan string, 100)}
	rc.srv = httptest.NewServer(http.HandlerFunc(rc.serve))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if err := notify.Verify([]byte(hookSecret), r.Header, body, time.Now(), 5*time.Minute); err != nil {
		rc.mu.Lock()
		rc.bad++
		rc.mu.Unlock()
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	var n elicitation.Notice
	if err := json.Unmarshal(body, &n); err != nil || n.DeliveryID != r.Header.Get(notify.HeaderDelivery) || string(n.Event) != r.Header.Get(notify.HeaderEvent) {
		rc.t.Errorf("webhook body %s does not match its headers %v", body, r.Header)
	}
	id := n.DeliveryID
	rc.mu.Lock()
	rc.attempts[id]++
	attempt := rc.attempts[id]
	rc.mu.Unlock()
	rc.seen <- id
	accept := true
	if rc.respond != nil {
		accept = rc.respond(w, n, attempt)
	}
	if !accept {
		return
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if _, dup := rc.notices[id]; !dup {
		rc.notices[id] = n
		rc.accepted[n.Event] = append(rc.accepted[n.Event], id)
	}
}

// next waits for the next attempt to arrive.
func (rc *receiver) next(t *testing.T, what string) string {
	t.Helper()
	select {
	case id := <-rc.seen:
		return id
	case <-time.After(20 * time.Second):
		t.Fatalf("no webhook attempt arrived: %s", what)
		return ""
	}
}

// deliveryRig is a service on a fresh embedded store (closed when t
// ends) notifying cfg's targets on a test clock, and the deliverer over
// them: what the tests that drive DeliverDue by hand share.
func deliveryRig(t *testing.T, cfg notify.Config) (*boltstore.Store, *elicitation.Service, *notify.Deliverer, *testclock.Clock) {
	t.Helper()
	st, err := boltstore.Open(dbPath(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	targets, err := notify.New(cfg, notify.Options{})
	if err != nil {
		t.Fatal(err)
	}
	clk := testclock.New(time.Now().UTC())
	svc := elicitation.NewService(elicitation.Config{Store: st, Now: clk.Now, Notifications: targets})
	return st, svc, &notify.Deliverer{Store: st, Targets: targets, Now: clk.Now, Log: slog.New(slog.DiscardHandler)}, clk
}

// server is the service's half of a local server: the store, the Service
// and the notification worker, as the local server wires them.
type server struct {
	store   *boltstore.Store
	svc     *elicitation.Service
	targets *notify.Targets
	cancel  context.CancelFunc
	done    chan error
	settled chan string // the id of each delivery that left the outbox, as its settle commits
}

func startServer(t *testing.T, dbPath string, cfg notify.Config, d func(*notify.Deliverer)) *server {
	t.Helper()
	st, err := boltstore.Open(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	targets, err := notify.New(cfg, notify.Options{})
	if err != nil {
		t.Fatal(err)
	}
	settled := make(chan string, 256)
	dl := &notify.Deliverer{Store: st, Targets: targets, Log: slog.New(settledLog{settled})}
	if d != nil {
		d(dl)
	}
	w := notify.NewWorker(dl, 50*time.Millisecond)
	targets.OnQueued(w.Wake)
	ctx, cancel := context.WithCancel(context.Background())
	s := &server{store: st, targets: targets, cancel: cancel, done: make(chan error, 1), settled: settled,
		svc: elicitation.NewService(elicitation.Config{Store: st, Notifications: targets})}
	go func() { s.done <- w.Run(ctx) }()
	t.Cleanup(func() { s.stop(t) })
	return s
}

// stop stops the worker (as a process exit would, mid-send or not) and
// closes the store.
func (s *server) stop(t *testing.T) {
	if s.cancel == nil {
		return
	}
	s.cancel()
	s.cancel = nil
	select {
	case <-s.done:
	case <-time.After(20 * time.Second):
		t.Error("the worker did not stop")
	}
	_ = s.store.Close()
}

func dbPath(t *testing.T) string { return filepath.Join(t.TempDir(), "elicitation.db") }

// waitSettled waits until the delivery id has left the outbox (it is
// settled a moment after the receiver answered): the deliverer's log line
// of its settle wakes it.
func waitSettled(t *testing.T, s *server, id string) {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		select {
		case got := <-s.settled:
			if got == id {
				return
			}
		case <-deadline:
			t.Fatalf("delivery %s was not settled", id)
		}
	}
}

// settledLog is a Deliverer's log as a test reads it: the id of every
// delivery whose attempt took it out of the outbox (delivered, given up,
// dropped), logged once its settle committed.
type settledLog struct{ ids chan<- string }

func (h settledLog) Enabled(context.Context, slog.Level) bool { return true }

func (h settledLog) Handle(_ context.Context, r slog.Record) error {
	var id, outcome string
	r.Attrs(func(a slog.Attr) bool {
		switch a.Key {
		case "deliveryId":
			id = a.Value.String()
		case "outcome":
			outcome = a.Value.String()
		}
		return true
	})
	switch notify.Outcome(outcome) {
	case notify.Delivered, notify.GaveUp, notify.Dropped:
		if r.Message == "notification" {
			select {
			case h.ids <- id:
			default: // nobody waits for so many
			}
		}
	}
	return nil
}

func (h settledLog) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h settledLog) WithGroup(string) slog.Handler      { return h }
