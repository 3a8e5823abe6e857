package mcptools_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/boltstore"
	"github.com/mcp-elicitation/elicitation/internal/compose"
	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/mcptools"
)

// newServer starts a handler for svc with opts on an httptest server,
// behind wrap (if any), and connects a client at protocol version.
func newServer(t *testing.T, opts mcptools.Options, wrap func(http.Handler) http.Handler, version string) *mcp.ClientSession {
	t.Helper()
	h := mcptools.New(opts).Handler()
	if wrap != nil {
		h = wrap(h)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	client := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp", DisableStandaloneSSE: true}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func newService(t *testing.T) *elicitation.Service {
	t.Helper()
	st, err := boltstore.Open(filepath.Join(t.TempDir(), "store.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return elicitation.NewService(elicitation.Config{Store: st})
}

// TestReviewURLOption: the caller's ReviewURL decides the public base, and
// gets the HTTP request that carried the call (here, a header a gateway
// would set).
func TestReviewURLOption(t *testing.T) {
	t.Parallel()
	for _, stateless := range []bool{false, true} {
		var hooked string
		opts := mcptools.Options{
			Service:   newService(t),
			Stateless: stateless,
			ReviewURL: func(r *http.Request, id, key string) string {
				return "https://review.example/" + r.Header.Get("X-Stage") + "/review/" + id + "/" + key
			},
			OnCreated: func(_ context.Context, _, u string) { hooked = u },
		}
		stage := func(h http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				r.Header.Set("X-Stage", "prod")
				h.ServeHTTP(w, r)
			})
		}
		cs := newServer(t, opts, stage, proto20251125)
		c := ok(t, cs, mcptools.ToolApproval, map[string]any{"message": "m", "context": 1})
		id := c["elicitationId"].(string)
		want := "https://review.example/prod/review/" + id + "/"
		if u := c["reviewUrl"].(string); len(u) <= len(want) || u[:len(want)] != want || hooked != u {
			t.Errorf("stateless=%v: reviewUrl %q (hooked %q), want it under %q", stateless, u, hooked, want)
		}
	}
}

// TestAwaitRespectsRequestDeadline: the HTTP request's deadline (on Lambda,
// the invocation's remaining time) bounds elicit_await even on protocols
// where the SDK detaches tool handlers from the request: with 2.5 s left
// and the service's 2 s margin, an await without waitSeconds returns
// pending long before the service's 20 s bound.
func TestAwaitRespectsRequestDeadline(t *testing.T) {
	t.Parallel()
	for _, version := range []string{proto20251125, proto20260728} {
		t.Run(version, func(t *testing.T) {
			deadline := func(h http.Handler) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					ctx, cancel := context.WithTimeout(r.Context(), 2500*time.Millisecond)
					defer cancel()
					h.ServeHTTP(w, r.WithContext(ctx))
				})
			}
			cs := newServer(t, mcptools.Options{Service: newService(t), Stateless: true, ReviewURL: reviewURL}, deadline, version)
			c := ok(t, cs, mcptools.ToolApproval, map[string]any{"message": "m", "context": 1})
			start := time.Now()
			if got := ok(t, cs, mcptools.ToolAwait, map[string]any{"elicitationId": c["elicitationId"]}); got["status"] != "pending" {
				t.Errorf("await = %v, want pending", got)
			}
			if d := time.Since(start); d >= 2500*time.Millisecond {
				t.Errorf("await took %s, past the request's deadline", d)
			}
		})
	}
}

// TestClientCannotForgeRequestRef: a client-sent reference header is
// replaced, so a call never sees another request's HTTP request.
func TestClientCannotForgeRequestRef(t *testing.T) {
	t.Parallel()
	var seen []string
	opts := mcptools.Options{
		Service:   newService(t),
		Stateless: true,
		ReviewURL: func(r *http.Request, id, key string) string {
			seen = append(seen, r.Header.Get("X-Who"))
			return compose.ReviewURL("", r, id, key)
		},
	}
	forge := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			r.Header.Set("X-Elicitation-Request-Ref", "1")
			r.Header.Set("X-Who", "me")
			h.ServeHTTP(w, r)
		})
	}
	cs := newServer(t, opts, forge, proto20260728)
	for range 3 {
		ok(t, cs, mcptools.ToolApproval, map[string]any{"message": "m", "context": 1})
	}
	if len(seen) != 3 || seen[0] != "me" || seen[2] != "me" {
		t.Errorf("ReviewURL saw requests %v", seen)
	}
}
