// Package notifybench holds the parts of the hanging-target benchmark
// (issue 22.1) that both deployments' runs share: the two webhook targets
// on loopback and the clock from a notice's creation to its arrival. The
// local run is `elicitation-bench notify` (a real server over MCP); the AWS
// run is lambdanotify's BenchmarkHangingTargetOnAWS (the notify function's
// handler over DynamoDB Local's stream). docs/benchmarks.md has both.
package notifybench

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/notify"
)

// Hooks are two webhook targets on loopback: Stuck accepts every request
// and never answers (until Close), Healthy checks each signature and notes
// when each notice arrives.
type Hooks struct {
	StuckURL, HealthyURL string

	stuck, healthy *http.Server
	hang           chan struct{}
	arrived        chan arrival
	expected       chan struct{} // a token when Expect names another notice

	mu      sync.Mutex
	created map[string]time.Time // elicitation id -> when its creation began
	early   []arrival            // arrived before Expect named them
}

type arrival struct {
	id string
	at time.Time
}

// Start starts both targets; secret is the webhooks' signing secret.
func Start(secret string) (*Hooks, error) {
	h := &Hooks{hang: make(chan struct{}), arrived: make(chan arrival, 1<<16), expected: make(chan struct{}, 1), created: map[string]time.Time{}}
	h.stuck = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-h.hang:
		case <-r.Context().Done():
		}
	})}
	h.healthy = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if err := notify.Verify([]byte(secret), r.Header, body, time.Now(), 5*time.Minute); err != nil {
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		var n struct {
			ID string `json:"elicitationId"`
		}
		_ = json.Unmarshal(body, &n)
		h.arrived <- arrival{id: n.ID, at: time.Now()}
	})}
	var err error
	if h.StuckURL, err = serveOn(h.stuck); err != nil {
		return nil, err
	}
	if h.HealthyURL, err = serveOn(h.healthy); err != nil {
		h.stuck.Close()
		return nil, err
	}
	return h, nil
}

func serveOn(s *http.Server) (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("listen for a webhook target: %w", err)
	}
	go func() { _ = s.Serve(ln) }()
	return "http://" + ln.Addr().String() + "/hook", nil
}

// Close releases the stuck target's requests and stops both targets.
func (h *Hooks) Close() {
	close(h.hang)
	h.stuck.Close()
	h.healthy.Close()
}

// Expect says that the request id, whose creation began at start, notifies
// the healthy target.
func (h *Hooks) Expect(id string, start time.Time) {
	h.mu.Lock()
	h.created[id] = start
	h.mu.Unlock()
	select {
	case h.expected <- struct{}{}:
	default: // a token is there already: Collect looks at all of them
	}
}

// Collect waits until n expected notices have arrived at the healthy
// target and returns each one's latency from the start of its creation, in
// milliseconds, in the order they arrived. A notice that arrives before
// its Expect is held until then. It fails if they have not all arrived
// within the bound.
func (h *Hooks) Collect(n int, within time.Duration) ([]float64, error) {
	var ms []float64
	deadline := time.After(within)
	for len(ms) < n {
		select {
		case a := <-h.arrived:
			h.mu.Lock()
			h.early = append(h.early, a)
			h.mu.Unlock()
		case <-h.expected: // look again at what arrived before its Expect
		case <-deadline:
			return ms, fmt.Errorf("%d of %d healthy notices arrived within %s", len(ms), n, within)
		}
		h.mu.Lock()
		kept := h.early[:0]
		for _, a := range h.early {
			if c, ok := h.created[a.id]; ok {
				ms = append(ms, float64(a.at.Sub(c).Microseconds())/1000)
				delete(h.created, a.id)
			} else {
				kept = append(kept, a)
			}
		}
		h.early = kept
		h.mu.Unlock()
	}
	return ms, nil
}
