package proxy_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/proxy"
	"github.com/mcp-elicitation/elicitation/internal/proxy/config"
)

// TestUpstreamErrorsRedactedForClients: while the upstream is down, the
// errors a client is answered with (a prompts, resources or completion
// request passed through; a tools/list page the cache lacks) name the
// upstream without the credentials its URL carries (user information, a
// query's api_key), as the log does: the client is an agent, and the
// upstream's credential is the operator's, not the agent's.
func TestUpstreamErrorsRedactedForClients(t *testing.T) {
	t.Parallel()
	port := freePort(t) // nothing listens there
	cfg, err := config.ParseWith(fmt.Appendf(nil, "upstream:\n  url: \"http://hunter2user:hunter2pass@127.0.0.1:%d/mcp?api_key=hunter2key\"\n", port), config.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := proxy.New(context.Background(), proxy.Options{Config: cfg, Logger: testLogger(t), Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	for _, d := range []downstream{downstreams[0], downstreams[2]} {
		cs := connect(t, p, d, nil, nil)
		for name, call := range map[string]func() error{
			"prompts/list": func() error { _, err := cs.ListPrompts(callCtx(t), nil); return err },
			"resources/read": func() error {
				_, err := cs.ReadResource(callCtx(t), &mcp.ReadResourceParams{URI: "file:///x"})
				return err
			},
			"tools/list with a cursor": func() error { _, err := cs.ListTools(callCtx(t), &mcp.ListToolsParams{Cursor: "next"}); return err },
		} {
			err := call()
			if err == nil {
				t.Fatalf("%s %s: answered while the upstream is down", d.name, name)
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("%s %s: the client was told the upstream's credentials: %v", d.name, name, err)
			}
		}
	}
}
