package proxy_test

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/proxy"
	"github.com/mcp-elicitation/elicitation/internal/proxy/config"
	"github.com/mcp-elicitation/elicitation/internal/testenv"
)

// failures is a slog handler that reports each failed reconnection
// attempt's number on a channel, beside the test log.
type failures struct {
	slog.Handler
	attempts chan int64
}

func (h failures) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == "upstream reconnection failed; still retrying" {
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "attempt" {
				select {
				case h.attempts <- a.Value.Int64():
				default:
				}
			}
			return true
		})
	}
	return h.Handler.Handle(ctx, r)
}

func (h failures) WithAttrs(as []slog.Attr) slog.Handler {
	return failures{h.Handler.WithAttrs(as), h.attempts}
}

func (h failures) WithGroup(name string) slog.Handler {
	return failures{h.Handler.WithGroup(name), h.attempts}
}

// TestListRightAfterTheUpstreamComesUp: a proxy started before its URL
// upstream (with the drop-in leftovers of an original's configuration:
// args: [] and env: {} beside the url, a duplicate key) lists the
// upstream's tools, and forwards a call, on the first request after the
// upstream comes up: it connects on demand rather than at its next
// scheduled attempt, which by then is seconds away.
func TestListRightAfterTheUpstreamComesUp(t *testing.T) {
	t.Parallel()
	port := freePort(t)
	cfg, err := config.ParseWith(fmt.Appendf(nil, "upstream:\n  url: http://127.0.0.1:1/mcp\n  url: \"http://127.0.0.1:%d/mcp\"\n  args: []\n  env: {}\n", port), config.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Warnings) != 3 {
		t.Errorf("warnings %v, want the duplicate url, args and env", cfg.Warnings)
	}
	attempts := make(chan int64, 100)
	log := slog.New(failures{testLogger(t).Handler(), attempts})
	p, err := proxy.New(context.Background(), proxy.Options{Config: cfg, Logger: log, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	for _, d := range []downstream{downstreams[0], downstreams[2], downstreams[3]} {
		d := d
		cs := connect(t, p, d, nil, nil)
		if list, err := cs.ListTools(callCtx(t), nil); err != nil || len(list.Tools) != 0 {
			t.Fatalf("%s: tools/list before the upstream: %v %v", d.name, list, err)
		}
	}
	// Let the backoff grow: after the fifth failed attempt the next one
	// is 3.2 s away.
	for waiting := time.After(60 * time.Second); ; {
		select {
		case n := <-attempts:
			if n < 5 {
				continue
			}
		case <-waiting:
			t.Fatal("no fifth failed attempt within a minute")
		}
		break
	}
	up := mcp.NewServer(&mcp.Implementation{Name: "late-upstream", Version: "1"}, nil)
	up.AddTool(&mcp.Tool{Name: "echo", InputSchema: map[string]any{"type": "object", "properties": map[string]any{"message": map[string]any{"type": "string"}}}},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo " + string(req.Params.Arguments)}}}, nil
		})
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return up }, nil)}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	started := time.Now()
	for _, d := range []downstream{downstreams[0], downstreams[2], downstreams[3]} {
		cs := connect(t, p, d, nil, nil)
		list, err := cs.ListTools(callCtx(t), nil)
		if err != nil || len(list.Tools) != 1 || list.Tools[0].Name != "echo" {
			t.Fatalf("%s: tools/list right after the upstream came up: %v %v", d.name, list, err)
		}
		if res := callTool(t, cs, "echo", map[string]any{"message": "late"}); res.IsError || text(res) != `echo {"message":"late"}` {
			t.Errorf("%s: echo right after the upstream came up: %s", d.name, text(res))
		}
	}
	t.Logf("listed and called within %v of the upstream's start", time.Since(started))
}

// TestListRightAfterEverythingComesUp is the same against the MCP
// reference server, started after the proxy.
func TestListRightAfterEverythingComesUp(t *testing.T) {
	testenv.Slow(t, "server-everything")
	t.Parallel()
	port := freePort(t)
	p := startProxy(t, fmt.Sprintf("upstream:\n  url: \"http://127.0.0.1:%d/mcp\"\n  args: []\n  env: {}\n", port))
	cs := connect(t, p, downstreams[2], nil, nil)
	if list, err := cs.ListTools(callCtx(t), nil); err != nil || len(list.Tools) != 0 {
		t.Fatalf("tools/list before the upstream: %v %v", list, err)
	}
	startEverythingAt(t, "streamableHttp", port)
	list, err := cs.ListTools(callCtx(t), nil)
	if err != nil || len(list.Tools) < 5 {
		t.Fatalf("tools/list right after the reference server came up: %v %v", list, err)
	}
	if res := callTool(t, cs, "echo", map[string]any{"message": "late"}); res.IsError || text(res) != "Echo: late" {
		t.Errorf("echo right after the reference server came up: %s", text(res))
	}
}
