package proxy_test

//lint:file-ignore SA1019 sampling, roots and logging are deprecated as of 2026-07-28 (SEP-2577) but in their deprecation window; the proxy relays them for the clients and servers that still use them, as the original does.

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/proxy"
)

// callResult calls a tool and returns its text, or the error's, without
// failing: a refusal may come either way.
func callResult(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if ctx.Err() != nil {
		t.Fatalf("%s hung: %v", name, err)
	}
	if err != nil {
		return err.Error(), true
	}
	return text(res), res.IsError
}

// TestEverythingRelay checks that the proxy is transparent both ways, with
// the reference server as upstream: the tools it offers only to clients
// that declare sampling, elicitation and roots are listed, their requests
// reach the downstream client whose call they belong to and its answers go
// back; a client without the capability, or on 2026-07-28, gets a clean
// refusal; log messages and resource updates pass on.
func TestEverythingRelay(t *testing.T) {
	node, script := everything(t)
	upstreams := map[string]string{
		"stdio": fmt.Sprintf("upstream:\n  command: %q\n  args: [%q]\n", node, script),
		"http":  fmt.Sprintf("upstream:\n  url: %q\n", startEverythingHTTP(t)),
	}
	for upName, yaml := range upstreams {
		for _, d := range []downstream{downstreams[0], downstreams[2]} {
			t.Run(upName+"/"+d.name+"/capable", func(t *testing.T) {
				p := startProxy(t, yaml) // one proxy per client: the upstream caches its roots
				logs := make(chan *mcp.LoggingMessageParams, 10)
				updated := make(chan string, 10)
				client := &mcp.ClientOptions{
					CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
						prompt := req.Params.Messages[0].Content.(*mcp.TextContent).Text
						return &mcp.CreateMessageResult{Role: "assistant", Model: "test-model", Content: &mcp.TextContent{Text: "sampled by the client for " + prompt}}, nil
					},
					LoggingMessageHandler:  func(_ context.Context, req *mcp.LoggingMessageRequest) { offer(logs, req.Params) },
					ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) { offer(updated, req.Params.URI) },
				}
				e := &elicitor{answer: accept(map[string]any{"name": "Ada Lovelace", "check": true, "legacyTitledEnum": "pet-2"})}
				cs := connectWithRoots(t, p, d, e, client, &mcp.Root{URI: "file:///work/project", Name: "project"})
				if got, isErr := callResult(t, cs, "trigger-sampling-request", map[string]any{"prompt": "hello"}); isErr || !strings.Contains(got, "sampled by the client for") || !strings.Contains(got, "hello") {
					t.Errorf("sampling: %s", got)
				}
				if got, isErr := callResult(t, cs, "trigger-elicitation-request", map[string]any{}); isErr || !strings.Contains(got, "Ada Lovelace") || e.count() != 1 {
					t.Errorf("elicitation (%d forms): %s", e.count(), got)
				}
				if got, isErr := callResult(t, cs, "get-roots-list", map[string]any{}); isErr || !strings.Contains(got, "file:///work/project") {
					t.Errorf("roots: %s", got)
				}
				if err := cs.SetLoggingLevel(t.Context(), &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
					t.Fatal(err)
				}
				callResult(t, cs, "toggle-simulated-logging", map[string]any{})
				select {
				case m := <-logs:
					if m.Level == "" {
						t.Errorf("log message %+v", m)
					}
				case <-time.After(15 * time.Second):
					t.Error("no log message passed on")
				}
				const uri = "demo://resource/static/document/architecture.md"
				if err := cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: uri}); err != nil {
					t.Fatal(err)
				}
				callResult(t, cs, "toggle-subscriber-updates", map[string]any{})
				select {
				case got := <-updated:
					if got != uri {
						t.Errorf("updated %s", got)
					}
				case <-time.After(15 * time.Second):
					t.Error("no resources/updated passed on")
				}
			})
			t.Run(upName+"/"+d.name+"/incapable", func(t *testing.T) {
				p := startProxy(t, yaml)
				cs := connect(t, p, d, nil, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
				for tool, want := range map[string]string{
					"trigger-sampling-request":    "does not support sampling",
					"trigger-elicitation-request": "does not support elicitation",
					"get-roots-list":              "does not support roots",
				} {
					got, isErr := callResult(t, cs, tool, map[string]any{"prompt": "x"})
					if tool == "get-roots-list" && strings.Contains(got, "no roots are currently configured") {
						continue // the reference server's own answer when roots/list failed
					}
					if !isErr || !strings.Contains(got, want) {
						t.Errorf("%s: isError=%v %s; want a refusal saying %q", tool, isErr, got, want)
					}
				}
			})
		}
		t.Run(upName+"/2026-07-28 refused", func(t *testing.T) {
			p := startProxy(t, yaml)
			for _, d := range []downstream{downstreams[1], downstreams[3]} {
				cs := connect(t, p, d, &elicitor{answer: accept(map[string]any{})}, &mcp.ClientOptions{
					CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
						t.Error("a 2026-07-28 client was sent a request")
						return nil, fmt.Errorf("unexpected")
					},
				})
				if got, isErr := callResult(t, cs, "trigger-sampling-request", map[string]any{"prompt": "x"}); !isErr || !strings.Contains(got, "2026-07-28") && !strings.Contains(got, "does not support") {
					t.Errorf("%s: isError=%v %s", d.name, isErr, got)
				}
			}
		})
	}
}

func connectWithRoots(t *testing.T, p *proxy.Proxy, d downstream, e *elicitor, opts *mcp.ClientOptions, roots ...*mcp.Root) *mcp.ClientSession {
	t.Helper()
	o := *opts
	o.Capabilities = nil // the SDK's default: roots with listChanged
	cs := connectClient(t, p, d, e, &o, func(c *mcp.Client) { c.AddRoots(roots...) })
	return cs
}

// TestEverythingRelayURLElicitation: the upstream's URL-mode elicitation
// reaches a client that declares URL mode, and a form-only client gets a
// refusal.
func TestEverythingRelayURLElicitation(t *testing.T) {
	node, script := everything(t)
	yaml := fmt.Sprintf("upstream:\n  command: %q\n  args: [%q]\n", node, script)
	for _, tt := range []struct {
		name string
		caps *mcp.ClientCapabilities
		want string
		ok   bool
	}{
		{"url client", &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}}}, "completed the URL elicitation", true},
		{"form-only client", &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}}}, "does not support URL elicitation", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := startProxy(t, yaml)
			var asked []*mcp.ElicitParams
			cs := connect(t, p, downstreams[2], nil, &mcp.ClientOptions{
				Capabilities: tt.caps,
				ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					asked = append(asked, req.Params)
					return &mcp.ElicitResult{Action: "accept"}, nil
				},
			})
			got, isErr := callResult(t, cs, "trigger-url-elicitation", map[string]any{"url": "https://example.com/consent"})
			if isErr == tt.ok || !strings.Contains(got, tt.want) {
				t.Errorf("isError=%v %s; want %q", isErr, got, tt.want)
			}
			if tt.ok && (len(asked) != 1 || asked[0].Mode != "url" || asked[0].URL != "https://example.com/consent") {
				t.Errorf("asked %+v", asked)
			}
		})
	}
}

// TestPromptAndResourceListChanged: the upstream's prompts and resources
// list_changed reach every downstream session, and the lists they then
// read are the upstream's.
func TestPromptAndResourceListChanged(t *testing.T) {
	u := newCountingUpstream(t)
	noop := func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{}, nil
	}
	read := func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{}, nil
	}
	// Offered from the start, so that the upstream declares the capabilities.
	u.server.AddPrompt(&mcp.Prompt{Name: "first"}, noop)
	u.server.AddResource(&mcp.Resource{Name: "first", URI: "test://first"}, read)
	p := startProxy(t, fmt.Sprintf(countingConfig, u.URL, true))
	for _, d := range []downstream{downstreams[0], downstreams[2]} {
		t.Run(d.name, func(t *testing.T) {
			prompts, resources := make(chan struct{}, 10), make(chan struct{}, 10)
			cs := connect(t, p, d, nil, &mcp.ClientOptions{
				PromptListChangedHandler:   func(context.Context, *mcp.PromptListChangedRequest) { offer(prompts, struct{}{}) },
				ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { offer(resources, struct{}{}) },
			})
			name := "added-" + strings.ReplaceAll(d.name, "/", "-")
			u.server.AddPrompt(&mcp.Prompt{Name: name}, noop)
			u.server.AddResource(&mcp.Resource{Name: name, URI: "test://" + name}, read)
			for what, ch := range map[string]chan struct{}{"prompts": prompts, "resources": resources} {
				select {
				case <-ch:
				case <-time.After(20 * time.Second):
					t.Fatalf("%s/list_changed not passed on", what)
				}
			}
			pl, err := cs.ListPrompts(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			rl, err := cs.ListResources(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, x := range pl.Prompts {
				names = append(names, x.Name)
			}
			for _, x := range rl.Resources {
				names = append(names, x.URI)
			}
			got := strings.Join(names, ",")
			if !strings.Contains(got, name) || !strings.Contains(got, "test://"+name) || strings.Contains(got, "mcp-elicitation-proxy:") {
				t.Errorf("lists after the change: %s", got)
			}
		})
	}
}

// TestRelayConcurrentHTTPClients: with an HTTP upstream, the upstream's
// requests name their call (they arrive on its response stream), so two
// HTTP clients whose calls are in flight at once each get their own
// sampling request.
func TestRelayConcurrentHTTPClients(t *testing.T) {
	p := startProxy(t, fmt.Sprintf("upstream:\n  url: %q\n", startEverythingHTTP(t)))
	var entered sync.WaitGroup
	entered.Add(2)
	both := make(chan struct{})
	go func() { entered.Wait(); close(both) }()
	clients := map[string]*mcp.ClientSession{}
	for _, name := range []string{"alice", "bob"} {
		clients[name] = connect(t, p, downstreams[2], nil, &mcp.ClientOptions{
			CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
				entered.Done()
				select {
				case <-both: // both calls are in flight now
				case <-time.After(15 * time.Second):
					return nil, fmt.Errorf("the other call never reached its client")
				}
				prompt := req.Params.Messages[0].Content.(*mcp.TextContent).Text
				return &mcp.CreateMessageResult{Role: "assistant", Model: "m", Content: &mcp.TextContent{Text: name + " answered " + prompt}}, nil
			},
		})
	}
	var wg sync.WaitGroup
	results := map[string]string{}
	var mu sync.Mutex
	for name, cs := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, _ := callResult(t, cs, "trigger-sampling-request", map[string]any{"prompt": "for " + name})
			mu.Lock()
			results[name] = got
			mu.Unlock()
		}()
	}
	wg.Wait()
	for name, got := range results {
		if !strings.Contains(got, name+" answered") || !strings.Contains(got, "for "+name) {
			t.Errorf("%s's call got: %s", name, got)
		}
	}
}

// TestSubscriptionRenewedAfterReconnect: a session's resource subscription
// survives the upstream's restart (the proxy subscribes the new upstream
// session again).
func TestSubscriptionRenewedAfterReconnect(t *testing.T) {
	node, script := everything(t)
	p := startProxy(t, fmt.Sprintf("upstream:\n  command: %q\n  args: [%q]\n", node, script))
	updated := make(chan string, 10)
	relisted := make(chan struct{}, 10)
	cs := connect(t, p, downstreams[0], nil, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) { offer(updated, req.Params.URI) },
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { offer(relisted, struct{}{}) },
	})
	const uri = "demo://resource/static/document/architecture.md"
	if err := cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
	pid := p.UpstreamPID()
	if pid == 0 {
		t.Fatal("no upstream process")
	}
	syscall.Kill(pid, syscall.SIGKILL)
	deadline := time.After(30 * time.Second)
	for p.UpstreamPID() == pid || p.UpstreamPID() == 0 {
		select {
		case <-relisted:
		case <-deadline:
			t.Fatal("the upstream was not restarted")
		case <-time.After(20 * time.Millisecond):
		}
	}
	// The renewal runs with the list refresh after the reconnection.
	for {
		got, _ := callResult(t, cs, "toggle-subscriber-updates", map[string]any{})
		select {
		case u := <-updated:
			if u != uri {
				t.Errorf("updated %s", u)
			}
			return
		case <-time.After(2 * time.Second):
		case <-deadline:
			t.Fatalf("no resources/updated after the restart (%s)", got)
		}
	}
}
