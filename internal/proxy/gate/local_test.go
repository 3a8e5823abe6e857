package gate_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/compose/embeddedstore"
	"github.com/mcp-elicitation/elicitation/internal/compose/mcpendpoint"
	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/pagetoken"
	"github.com/mcp-elicitation/elicitation/internal/proxy/config"
	"github.com/mcp-elicitation/elicitation/internal/proxy/gate"
)

// Local is a real elicitation service for the gate's tests (the gate's
// embedded service: the review page and the embedded store, composed by
// internal/compose, with the MCP tools served beside it for the gate's
// elicitation_service.url), with a reviewer that answers through the
// service or, in Chromium, on the review page (reviewer_test.go).
type Local struct {
	// MCPURL is its MCP endpoint; Base the base of its review URLs.
	MCPURL, Base string
	Service      *elicitation.Service
	Embedded     *gate.Embedded
	created      chan string

	mu      sync.Mutex
	lastURL string
}

// Start runs the gate's embedded service (elicitation_service.embedded,
// on loopback, in a temporary directory) until the test ends.
func Start(t testing.TB) *Local {
	t.Helper()
	l := &Local{created: make(chan string, 100)}
	emb, err := gate.StartEmbedded(context.Background(), gate.EmbeddedOptions{
		Config: &config.EmbeddedService{Listen: "127.0.0.1:0", DataDir: t.TempDir()},
		OnCreated: func(_ context.Context, id, u string) {
			l.mu.Lock()
			l.lastURL = u
			l.mu.Unlock()
			select {
			case l.created <- id:
			default:
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = emb.Close() })
	l.Embedded = emb
	l.Service = emb.App.Service
	l.MCPURL, l.Base = ServeMCP(t, emb), emb.ReviewBase
	return l
}

// ServeMCP serves the MCP tools of an embedded service (which the gate
// calls in process) on a loopback port until the test ends, so that it
// stands for a service reached by elicitation_service.url, and returns
// the endpoint.
func ServeMCP(t testing.TB, emb *gate.Embedded) string {
	t.Helper()
	h, err := mcpendpoint.Part(embeddedstore.APIKeys, nil)(context.Background(), emb.App)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

// Created returns the ids of the requests created since the last call.
func (l *Local) Created() []string {
	var ids []string
	for {
		select {
		case id := <-l.created:
			ids = append(ids, id)
		default:
			return ids
		}
	}
}

// WaitCreated waits for the next request to be created and returns its id.
func (l *Local) WaitCreated(t testing.TB) string {
	t.Helper()
	select {
	case id := <-l.created:
		return id
	case <-time.After(30 * time.Second):
		t.Fatal("no request was created")
		return ""
	}
}

// IDKey splits a review URL into the request's id and the reviewer's key.
func IDKey(t testing.TB, reviewURL string) (id, key string) {
	t.Helper()
	u, err := url.Parse(reviewURL)
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(strings.TrimPrefix(u.Path, "/review/"), "/")
	if len(parts) != 2 {
		t.Fatalf("not a review URL: %q", reviewURL)
	}
	return parts[0], parts[1]
}

// Decide answers the review at reviewURL as a reviewer: decision
// submitted or declined, form values as the page posts them, picked option
// ids.
func (l *Local) Decide(t testing.TB, reviewURL string, decision elicitation.Decision, form map[string]string, picked ...string) {
	t.Helper()
	l.DecideWithComment(t, reviewURL, decision, "", form, picked...)
}

// DecideWithComment is Decide with the reviewer's comment.
func (l *Local) DecideWithComment(t testing.TB, reviewURL string, decision elicitation.Decision, comment string, form map[string]string, picked ...string) {
	t.Helper()
	id, key := IDKey(t, reviewURL)
	sub := elicitation.Submission{ID: pagetoken.NewRenderID(), Decision: decision, SelectedIDs: picked, Comment: comment}
	if form != nil {
		sub.Form = map[string][]string{}
		for k, v := range form {
			sub.Form[k] = []string{v}
		}
	}
	if _, err := l.Service.Submit(context.Background(), id, key, sub); err != nil {
		t.Fatalf("reviewer's answer: %v", err)
	}
}

// Payload reads what the reviewer of request id is shown.
func (l *Local) Payload(t testing.TB, reviewURL string) elicitation.Payload {
	t.Helper()
	id, key := IDKey(t, reviewURL)
	r, err := l.Service.OpenReview(context.Background(), id, key)
	if err != nil {
		t.Fatal(err)
	}
	return r.Payload
}

// Context decodes the context the reviewer of reviewURL is shown.
func (l *Local) Context(t testing.TB, reviewURL string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(l.Payload(t, reviewURL).Context, &m); err != nil {
		t.Fatalf("context: %v", err)
	}
	return m
}

// DecideLatest answers the most recently created request that is still
// pending, found through the store (for a test that has not seen its
// review URL).
func (l *Local) DecideLatest(t testing.TB, decision elicitation.Decision) {
	t.Helper()
	l.mu.Lock()
	u := l.lastURL
	l.mu.Unlock()
	if u == "" {
		t.Fatal("no request was created")
	}
	l.Decide(t, u, decision, nil)
}
