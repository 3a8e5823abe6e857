package proxy_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/proxy/plan"
)

// TestUpstreamNotReachableYet starts the proxy before its upstream listens,
// as the original can be started: clients connect, tools/list is empty and
// tool calls get a structured upstream_unavailable error; once the
// reference server comes up the proxy connects, tells its clients that the
// list changed, and forwards calls.
func TestUpstreamNotReachableYet(t *testing.T) {
	t.Parallel()
	port := freePort(t)
	p := startProxy(t, fmt.Sprintf("upstream:\n  url: \"http://127.0.0.1:%d/mcp\"\n", port))
	for _, d := range []downstream{downstreams[0], downstreams[2], downstreams[3]} {
		t.Run(d.name+"/before", func(t *testing.T) {
			cs := connect(t, p, d, nil, nil)
			list, err := cs.ListTools(callCtx(t), nil)
			if err != nil || len(list.Tools) != 0 {
				t.Fatalf("tools/list before the upstream: %v %v", list, err)
			}
			res := callTool(t, cs, "echo", map[string]any{"message": "hi"})
			o := decodeText[plan.Outcome](t, &mcp.CallToolResult{Content: res.Content})
			if !res.IsError || o.Error != "upstream_unavailable" || o.Tool != "echo" || !strings.Contains(o.Message, fmt.Sprint(port)) {
				t.Errorf("call before the upstream: isError=%v %+v", res.IsError, o)
			}
		})
	}
	changed := make(chan struct{}, 10)
	cs := connect(t, p, downstreams[0], nil, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { offer(changed, struct{}{}) },
	})
	startEverythingAt(t, "streamableHttp", port)
	select {
	case <-changed:
	case <-time.After(30 * time.Second):
		t.Fatal("no tools/list_changed after the upstream came up")
	}
	list, err := cs.ListTools(callCtx(t), nil)
	if err != nil || len(list.Tools) < 5 {
		t.Fatalf("tools/list after the upstream came up: %v %v", list, err)
	}
	for _, d := range downstreams {
		t.Run(d.name+"/after", func(t *testing.T) {
			if res := callTool(t, connect(t, p, d, nil, nil), "echo", map[string]any{"message": "late"}); res.IsError || text(res) != "Echo: late" {
				t.Errorf("echo after the upstream came up: %s", text(res))
			}
		})
	}
}
