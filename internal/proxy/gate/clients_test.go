package gate_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/proxy/gate"
)

// clientsProxy is the gated proxy on streamable HTTP in front of the
// recording upstream, with rest as the gate's configuration; service is
// its elicitation service's configuration.
func clientsProxy(t *testing.T, service, rest string) string {
	t.Helper()
	up := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return upstreamOnce(t) }, &mcp.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(up.Close)
	p := gatedProxy(t, fmt.Sprintf("upstream:\n  url: %q\n%s%s", up.URL, service, rest))
	srv := httptest.NewServer(p.HTTPHandler())
	t.Cleanup(srv.Close)
	return srv.URL
}

// clientAt connects an MCP client to endpoint from the loopback address
// from (127.0.0.1, 127.0.0.2, …: each another client's address) on
// protocol: 2025-11-25 on a session, 2026-07-28 without one. It shows no
// form, so the gate asks on the review page. header, if set, is sent on
// every request.
func clientAt(t *testing.T, endpoint, from, protocol string, header ...string) *mcp.ClientSession {
	t.Helper()
	dialer := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
	hc := &http.Client{Transport: headerTransport{header: header, rt: &http.Transport{DialContext: dialer.DialContext, MaxIdleConnsPerHost: 200}}}
	c := mcp.NewClient(&mcp.Implementation{Name: "agent " + from, Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: hc}, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

type headerTransport struct {
	header []string // name, value, …
	rt     http.RoundTripper
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	for i := 0; i+1 < len(h.header); i += 2 {
		r.Header.Set(h.header[i], h.header[i+1])
	}
	return h.rt.RoundTrip(r)
}

const wipeConfirmed = "tools:\n  wipe:\n    confirm_if:\n      always: true\n"

// Each client's review is its own: a second client making the identical
// call (another session from the same address, or another address
// without a session, even one whose request names the first client's
// address in the header the proxy's front names it by) is asked on its
// own review page, never handed the
// first client's review URL, and the first client's approval forwards
// the first client's call only (before, reviews were keyed by tool and
// arguments, so the second client got the first's review and could take
// its approval).
func TestEachClientHasItsOwnReview(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, protocol string
		from           [2]string
		// forge is a header the second client sends, naming the first
		// client as the proxy's front names a request's principal.
		forge []string
	}{
		{"two sessions from one address", "2025-11-25", [2]string{"127.0.0.1", "127.0.0.1"}, nil},
		{"two sessionless clients", "2026-07-28", [2]string{"127.0.0.1", "127.0.0.2"}, nil},
		{"a sessionless client naming another", "2026-07-28", [2]string{"127.0.0.1", "127.0.0.2"}, []string{"X-Mcp-Elicitation-Proxy-Principal", "address 127.0.0.1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			local := Start(t)
			endpoint := clientsProxy(t, fmt.Sprintf("elicitation_service:\n  url: %q\n  wait_seconds: 1\n", local.MCPURL), wipeConfirmed)
			a := clientAt(t, endpoint, tc.from[0], tc.protocol)
			b := clientAt(t, endpoint, tc.from[1], tc.protocol, tc.forge...)
			args := map[string]any{"path": "/srv/data"}
			ra := wantPending(t, call(t, a, "wipe", args))
			rb := wantPending(t, call(t, b, "wipe", args))
			if ra.ElicitationID == rb.ElicitationID || ra.ReviewURL == rb.ReviewURL {
				t.Fatalf("the second client was handed the first client's review %s", ra.ElicitationID)
			}
			if again := wantPending(t, call(t, a, "wipe", args)); again.ElicitationID != ra.ElicitationID {
				t.Errorf("the first client's retry asked again (%s), want its review %s", again.ElicitationID, ra.ElicitationID)
			}
			local.Decide(t, ra.ReviewURL, "submitted", nil)
			if got := call(t, b, "wipe", args); got.gate.ElicitationID != rb.ElicitationID {
				t.Errorf("the second client's retry after the first's approval: %q %+v, want its own review %s still pending", got.text, got.gate, rb.ElicitationID)
			}
			if got := call(t, a, "wipe", args); !strings.Contains(got.text, "wipe ran") {
				t.Errorf("the first client's retry after its approval: %q %+v, want it forwarded", got.text, got.gate)
			}
		})
	}
}

// One client's flood of gated calls refuses only its own: a client on one
// address making more distinct gated calls than the embedded service
// keeps pending requests for one principal (all the gate's requests are
// the anonymous principal's) has those past the gate's bound for one
// client (100) refused with too_many_open_reviews and a sentence saying
// why, its own open reviews are still picked up by its retries, and
// another client's call is still asked on the review page (before, every
// call was asked until the service's cap refused them, and then every
// other client's gated calls failed too).
func TestOneClientsFloodRefusesOnlyItsOwnReviews(t *testing.T) {
	t.Parallel()
	const bound = 100
	for _, protocol := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(protocol, func(t *testing.T) {
			t.Parallel()
			endpoint := clientsProxy(t, "elicitation_service:\n  embedded:\n    listen: \"127.0.0.1:0\"\n  wait_seconds: 1\n", wipeConfirmed)
			flood := clientAt(t, endpoint, "127.0.0.2", protocol)
			other := clientAt(t, endpoint, "127.0.0.1", protocol)
			// As many calls as the embedded service keeps pending requests
			// for one principal, and one more; 100 at a time.
			results := make([]callResult, elicitation.DefaultMaxPending+1)
			var wg sync.WaitGroup
			slots := make(chan struct{}, 100)
			for i := range results {
				wg.Add(1)
				slots <- struct{}{}
				go func() {
					defer func() { <-slots; wg.Done() }()
					results[i] = call(t, flood, "wipe", map[string]any{"path": fmt.Sprintf("/srv/%d", i)})
				}()
			}
			wg.Wait()
			if r := call(t, other, "wipe", map[string]any{"path": "/srv/0"}); r.gate.Error != gate.ErrorPending {
				t.Errorf("another client's gated call after the flood: %q %+v, want it asked on the review page", r.text, r.gate)
			}
			var pending, refused []int
			for i, r := range results {
				switch {
				case r.gate.Error == gate.ErrorPending:
					pending = append(pending, i)
				case r.gate.Reason == gate.ReasonTooManyReviews && strings.Contains(r.gate.Message, "this client already has 100 reviews"):
					refused = append(refused, i)
				default:
					t.Errorf("the flooding client's call %d: %q %+v", i, r.text, r.gate)
				}
			}
			if len(pending) != bound || len(refused) != len(results)-bound {
				t.Fatalf("the flooding client's %d calls: %d asked, %d refused; want %d asked, the rest refused", len(results), len(pending), len(refused), bound)
			}
			first := results[pending[0]].gate.ElicitationID
			if got := wantPending(t, call(t, flood, "wipe", map[string]any{"path": fmt.Sprintf("/srv/%d", pending[0])})); got.ElicitationID != first {
				t.Errorf("the flooding client's retry of an open review: asked again (%s), want %s", got.ElicitationID, first)
			}
		})
	}
}

// Clients together cannot reach the embedded service's cap either: the
// gate keeps at most as many reviews for all its clients as the service
// keeps pending for the one principal they all are, so ten clients on
// ten addresses each at their own bound fill it, and an eleventh client's
// call is refused by the gate with too_many_open_reviews, saying the
// proxy keeps no more for all its clients (before, the gate's bound for
// all was ten times the service's cap: the service refused the call, and
// the client read that the elicitation service could not be reached).
func TestAllClientsStayBelowTheServicesCap(t *testing.T) {
	t.Parallel()
	endpoint := clientsProxy(t, "elicitation_service:\n  embedded:\n    listen: \"127.0.0.1:0\"\n  wait_seconds: 1\n", wipeConfirmed)
	const clients, each = 10, elicitation.DefaultMaxPending / 10
	results := make([]callResult, clients*each)
	var wg sync.WaitGroup
	slots := make(chan struct{}, 100)
	for c := range clients {
		cs := clientAt(t, endpoint, fmt.Sprintf("127.0.0.%d", 2+c), "2026-07-28")
		for i := range each {
			wg.Add(1)
			slots <- struct{}{}
			go func() {
				defer func() { <-slots; wg.Done() }()
				results[c*each+i] = call(t, cs, "wipe", map[string]any{"path": fmt.Sprintf("/srv/%d", i)})
			}()
		}
	}
	wg.Wait()
	for i, r := range results {
		if r.gate.Error != gate.ErrorPending {
			t.Fatalf("client %d's call %d, within its bound: %q %+v", i/each, i%each, r.text, r.gate)
		}
	}
	r := call(t, clientAt(t, endpoint, "127.0.0.20", "2026-07-28"), "wipe", map[string]any{"path": "/srv/0"})
	if r.gate.Reason != gate.ReasonTooManyReviews || !strings.Contains(r.gate.Message, fmt.Sprintf("the proxy already keeps %d reviews open for all its clients", elicitation.DefaultMaxPending)) {
		t.Errorf("an eleventh client's call when the gate keeps as many reviews as the service's cap: %q %+v, want too_many_open_reviews for all clients", r.text, r.gate)
	}
}

// awaitFront passes everything to the MCP endpoint target and counts the
// elicit_await calls in flight, sending on changed at each change.
type awaitFront struct {
	mu       sync.Mutex
	inFlight int
	changed  chan struct{}
}

func (f *awaitFront) start(t *testing.T, target string) string {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: u.Scheme, Host: u.Host})
	rp.FlushInterval = -1
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if bytes.Contains(body, []byte(`"elicit_await"`)) {
			f.add(1)
			defer f.add(-1)
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + u.Path
}

func (f *awaitFront) add(n int) {
	f.mu.Lock()
	f.inFlight += n
	f.mu.Unlock()
	f.notify()
}

func (f *awaitFront) notify() {
	select {
	case f.changed <- struct{}{}:
	default:
	}
}

func (f *awaitFront) waiting() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.inFlight
}

// One client's many gated calls at once do not use up everyone's waits
// at the elicitation service: the service holds at most 64 of one
// principal's elicit_await calls at once (the gate's are all the
// proxy's), so the gate lets one client wait in at most 8 calls at once
// and all clients in at most 64; a call past that returns its pending
// review at once. Here a client makes 70 gated calls at once and, while
// those that wait are waiting, another client's call is still asked and
// waited on (before, the first client's waits took all 64 of the
// service's, and the other client's call, and the first's own past 64,
// failed with elicitation_failed).
func TestOneClientsCallsDoNotUseUpEveryonesWaits(t *testing.T) {
	t.Parallel()
	local := Start(t)
	front := &awaitFront{changed: make(chan struct{}, 1)}
	service := front.start(t, local.MCPURL)
	endpoint := clientsProxy(t, fmt.Sprintf("elicitation_service:\n  url: %q\n  wait_seconds: 3\n", service), wipeConfirmed)
	flood := clientAt(t, endpoint, "127.0.0.2", "2025-11-25")
	other := clientAt(t, endpoint, "127.0.0.1", "2025-11-25")
	const calls = 70
	results := make([]callResult, calls)
	var mu sync.Mutex
	returned := 0
	var wg sync.WaitGroup
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := call(t, flood, "wipe", map[string]any{"path": fmt.Sprintf("/srv/%d", i)})
			mu.Lock()
			results[i] = r
			returned++
			mu.Unlock()
			front.notify()
		}()
	}
	// Until every call of the first client has returned or is waiting.
	safety := time.After(time.Minute)
	for {
		mu.Lock()
		n := returned
		mu.Unlock()
		if n+front.waiting() >= calls {
			break
		}
		select {
		case <-front.changed:
		case <-safety:
			t.Fatalf("after a minute, %d of the first client's calls returned and %d wait", n, front.waiting())
		}
	}
	if r := call(t, other, "wipe", map[string]any{"path": "/srv/0"}); r.gate.Error != gate.ErrorPending {
		t.Errorf("another client's gated call while the first's wait: %q %+v, want it asked on the review page", r.text, r.gate)
	}
	wg.Wait()
	for i, r := range results {
		if r.gate.Error != gate.ErrorPending {
			t.Errorf("the first client's call %d: %q %+v, want its review pending", i, r.text, r.gate)
		}
	}
}
