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

// TestSubscribeAndUnsubscribe: a client's resources/subscribe is passed
// upstream, and its resources/unsubscribe, the resource's last, too, and
// answered with success, on a session and over HTTP.
func TestSubscribeAndUnsubscribe(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	upstreamSubs := map[string]int{}
	up := mcp.NewServer(&mcp.Implementation{Name: "subscribable", Version: "1"}, &mcp.ServerOptions{
		SubscribeHandler: func(_ context.Context, req *mcp.SubscribeRequest) error {
			mu.Lock()
			defer mu.Unlock()
			upstreamSubs[req.Params.URI]++
			return nil
		},
		UnsubscribeHandler: func(_ context.Context, req *mcp.UnsubscribeRequest) error {
			mu.Lock()
			defer mu.Unlock()
			upstreamSubs[req.Params.URI]--
			return nil
		},
	})
	up.AddResource(&mcp.Resource{URI: "file:///watched", Name: "watched"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "file:///watched", Text: "x"}}}, nil
	})
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return up }, nil))
	t.Cleanup(srv.Close)
	p := startProxy(t, fmt.Sprintf("upstream:\n  url: %q\n", srv.URL))
	for _, d := range []downstream{downstreams[0], downstreams[2]} {
		cs := connect(t, p, d, nil, nil)
		if err := cs.Subscribe(callCtx(t), &mcp.SubscribeParams{URI: "file:///watched"}); err != nil {
			t.Fatalf("%s: subscribe: %v", d.name, err)
		}
		if err := cs.Unsubscribe(callCtx(t), &mcp.UnsubscribeParams{URI: "file:///watched"}); err != nil {
			t.Errorf("%s: unsubscribe: %v", d.name, err)
		}
		mu.Lock()
		n := upstreamSubs["file:///watched"]
		mu.Unlock()
		if n != 0 {
			t.Errorf("%s: the upstream holds %d subscriptions after the last unsubscribe, want 0", d.name, n)
		}
	}
}
