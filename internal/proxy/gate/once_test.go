package gate_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/proxy"
	"github.com/mcp-elicitation/elicitation/internal/proxy/config"
	"github.com/mcp-elicitation/elicitation/internal/proxy/gate"
	"github.com/mcp-elicitation/elicitation/internal/proxy/plan"
)

// recorder keeps the tools/call POSTs a client sends that carry a
// requestState (a 2026-07-28 retry), headers and body, to be sent again.
type recorder struct {
	mu      sync.Mutex
	retries []*http.Request
	bodies  [][]byte
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		body, err := io.ReadAll(req.Body)
		if err != nil {
			return nil, err
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		if bytes.Contains(body, []byte(`"requestState"`)) {
			r.mu.Lock()
			r.retries = append(r.retries, req.Clone(context.Background()))
			r.bodies = append(r.bodies, body)
			r.mu.Unlock()
		}
	}
	return http.DefaultTransport.RoundTrip(req)
}

// resend posts the last recorded retry to endpoint, as sent, and returns
// the response body.
func (r *recorder) resend(t *testing.T, endpoint string) string {
	t.Helper()
	r.mu.Lock()
	if len(r.retries) == 0 {
		r.mu.Unlock()
		t.Fatal("the client sent no retry")
	}
	orig, body := r.retries[len(r.retries)-1], r.bodies[len(r.bodies)-1]
	r.mu.Unlock()
	req, err := http.NewRequest(http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = orig.Header.Clone()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the resent retry: %s %s", resp.Status, b)
	}
	return string(b)
}

// A 2026-07-28 host's approval (its answer to the human_gate input request
// with the requestState) forwards the call once: the same retry sent
// again, to the same proxy or to another process sharing the state key
// (MCP_ELICITATION_PROXY_STATE_KEY), is asked again and never reaches the
// upstream a second time.
func TestHostApprovalStateUsedOnce(t *testing.T) {
	t.Parallel()
	upstream := recordingUpstream()
	up := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return upstream }, nil))
	t.Cleanup(up.Close)
	key := bytes.Repeat([]byte("k"), plan.MinStateKeyLen)
	start := func() string {
		cfg, err := config.ParseWith([]byte(fmt.Sprintf("upstream:\n  url: %q\n%s", up.URL, shapeRules)), config.Options{})
		if err != nil {
			t.Fatal(err)
		}
		sealer, err := plan.ParseStateKey(base64.StdEncoding.EncodeToString(key))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		p, err := proxy.New(ctx, proxy.Options{Config: cfg, Version: "test", Sealer: sealer})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = p.Close() })
		g, closer, err := gate.Open(ctx, cfg, gate.OpenOptions{Version: "test", Upstream: p.CallUpstream, Sealer: sealer})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = closer.Close() })
		g.Install(p.Planner())
		srv := httptest.NewServer(p.HTTPHandler())
		t.Cleanup(srv.Close)
		return srv.URL
	}
	a, b := start(), start()

	rec := &recorder{}
	var asked int
	var mu sync.Mutex
	c := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			mu.Lock()
			asked++
			mu.Unlock()
			return &mcp.ElicitResult{Action: "accept"}, nil
		},
	})
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: a, HTTPClient: &http.Client{Transport: rec}},
		&mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	if r := call(t, cs, "delete_file", map[string]any{"path": "/tmp/a"}); r.text != "delete_file ran" {
		t.Fatalf("approved on the host: %q %+v", r.text, r.gate)
	}
	mu.Lock()
	n := asked
	mu.Unlock()
	if n != 1 {
		t.Fatalf("the host was asked %d times", n)
	}
	for name, endpoint := range map[string]string{"the same proxy": a, "another proxy with the key": b} {
		body := rec.resend(t, endpoint)
		if !strings.Contains(body, `"`+"human_gate"+`"`) || strings.Contains(body, "delete_file ran") {
			t.Errorf("%s: the resent approval was not asked again: %s", name, body)
		}
	}
	var got []string
	if err := json.Unmarshal([]byte(call(t, cs, "calls", map[string]any{}).text), &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 {
		t.Errorf("the upstream ran %d calls: %q", len(got), got)
	}
}
