package proxy_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// subscribableUpstream is an HTTP upstream with one resource,
// file:///watched, that counts the subscriptions it holds.
func subscribableUpstream(t *testing.T) (url string, held func() int) {
	t.Helper()
	var mu sync.Mutex
	n := 0
	up := mcp.NewServer(&mcp.Implementation{Name: "subscribable", Version: "1"}, &mcp.ServerOptions{
		SubscribeHandler: func(context.Context, *mcp.SubscribeRequest) error {
			mu.Lock()
			defer mu.Unlock()
			n = 1 // the SDK keeps one subscription per session and URI
			return nil
		},
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error {
			mu.Lock()
			defer mu.Unlock()
			n = 0
			return nil
		},
	})
	up.AddResource(&mcp.Resource{URI: "file:///watched", Name: "watched"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "file:///watched", Text: "x"}}}, nil
	})
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return up }, nil))
	t.Cleanup(srv.Close)
	return srv.URL, func() int { mu.Lock(); defer mu.Unlock(); return n }
}

// TestUnsubscribeIsPerClient: a client's resources/unsubscribe ends its
// own subscription only: another client that never subscribed (or
// unsubscribes twice) cannot end the upstream subscription a client still
// holds, and the last holder's unsubscribe ends it.
func TestUnsubscribeIsPerClient(t *testing.T) {
	t.Parallel()
	url, held := subscribableUpstream(t)
	p := startProxy(t, fmt.Sprintf("upstream:\n  url: %q\n", url))
	alice, bob := connect(t, p, downstreams[2], nil, nil), connect(t, p, downstreams[2], nil, nil)
	watched := "file:///watched"
	if err := alice.Subscribe(callCtx(t), &mcp.SubscribeParams{URI: watched}); err != nil {
		t.Fatal(err)
	}
	if err := alice.Subscribe(callCtx(t), &mcp.SubscribeParams{URI: watched}); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := bob.Unsubscribe(callCtx(t), &mcp.UnsubscribeParams{URI: watched}); err != nil {
			t.Fatal(err)
		}
	}
	if held() != 1 {
		t.Fatalf("another client's unsubscribe ended the subscription alice holds")
	}
	if err := alice.Unsubscribe(callCtx(t), &mcp.UnsubscribeParams{URI: watched}); err != nil {
		t.Fatal(err)
	}
	if held() != 0 {
		t.Errorf("alice's one unsubscribe (after subscribing twice: the SDK keeps one subscription a session) left the upstream subscribed")
	}
}

// TestSubscribeAndUnsubscribe: a client's resources/subscribe is passed
// upstream, and its resources/unsubscribe, the resource's last, too, and
// answered with success, on a session and over HTTP.
func TestSubscribeAndUnsubscribe(t *testing.T) {
	t.Parallel()
	url, held := subscribableUpstream(t)
	p := startProxy(t, fmt.Sprintf("upstream:\n  url: %q\n", url))
	for _, d := range []downstream{downstreams[0], downstreams[2]} {
		cs := connect(t, p, d, nil, nil)
		if err := cs.Subscribe(callCtx(t), &mcp.SubscribeParams{URI: "file:///watched"}); err != nil || held() != 1 {
			t.Fatalf("%s: subscribe: %v, upstream subscriptions %d", d.name, err, held())
		}
		if err := cs.Unsubscribe(callCtx(t), &mcp.UnsubscribeParams{URI: "file:///watched"}); err != nil || held() != 0 {
			t.Errorf("%s: unsubscribe: %v, upstream subscriptions %d", d.name, err, held())
		}
	}
}
