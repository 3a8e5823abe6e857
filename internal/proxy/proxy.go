// Package proxy implements mcp-elicitation-proxy: a transparent MCP proxy in
// front of one upstream MCP server. Discovery stays native (the upstream's
// tools/list is passed on byte for byte); tools/call gains middleware that
// asks the user, through the client's form elicitation, for missing required
// arguments, and refuses to ask for anything that looks like a secret.
package proxy

//lint:file-ignore SA1019 logging is deprecated as of 2026-07-28 (SEP-2577) but in its deprecation window; the proxy passes an upstream's logging capability on.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/mcptools"
	"github.com/mcp-elicitation/elicitation/internal/proxy/config"
	"github.com/mcp-elicitation/elicitation/internal/proxy/plan"
)

// Options configures a Proxy. Config is required.
type Options struct {
	Config *config.Config
	// Version is announced as the proxy's server version.
	Version string
	// Logger receives the proxy's logs; nil discards them. Argument values
	// and secrets are never logged.
	Logger *slog.Logger
	// Sealer signs multi round-trip request state; nil means a key random
	// to this process.
	Sealer *plan.Sealer
	// UpstreamStderr receives a stdio upstream's standard error; nil
	// discards it.
	UpstreamStderr io.Writer
	// UpstreamDir is a stdio upstream's working directory; empty means the
	// proxy's.
	UpstreamDir string

	// The limits of HTTPHandler, in the elicitation service's terms
	// (compose.Settings.MCPLimits: the same flags and defaults).
	// SessionIdle closes a session without a request for this long (0:
	// DefaultSessionIdle; negative: never); MaxBodyBytes caps a request
	// body (0: DefaultMaxBodyBytes).
	SessionIdle  time.Duration
	MaxBodyBytes int64
	// SessionCap, if set, wraps HTTPHandler's session handler (the
	// protocols up to 2025-11-25; 2026-07-28 requests have no session)
	// with a cap on the open sessions: the elicitation service's own
	// (compose/mcpendpoint.SessionCap), wired by the proxy's main.
	SessionCap func(srv *mcp.Server, sessions http.Handler) http.Handler
}

// The defaults of Options' HTTP limits: the elicitation service's.
const (
	DefaultSessionIdle  = 30 * time.Minute
	DefaultMaxBodyBytes = 1 << 20
)

// Proxy is a running proxy: one upstream connection and one MCP server that
// any number of downstream sessions may use.
type Proxy struct {
	cfg     *config.Config
	opts    Options
	logger  *slog.Logger
	sealer  *plan.Sealer
	planner *plan.Planner
	server  *mcp.Server
	impl    *mcp.Implementation // the server's, as results name it
	up      *upstreamConn

	tools    toolCache
	progress progressRoutes
	relay    relay
	subs     subscriptions
	// fastCalls counts the calls forwarded on the fast path (stdio.go).
	fastCalls atomic.Int64

	refreshMu sync.Mutex // serializes tool list refreshes

	// Background work (list refreshes after upstream notifications) runs
	// under bgCtx and is waited for by Close.
	bgMu     sync.Mutex
	bg       sync.WaitGroup
	bgCtx    context.Context
	bgCancel context.CancelFunc
	closed   bool
	// ready is closed when New has finished, successfully or not; live
	// is then true if the proxy is usable. Upstream notifications that
	// arrive during New wait for it.
	ready chan struct{}
	live  bool
}

// New connects to the upstream, reads its tool list and builds the proxy's
// MCP server. An upstream that is not reachable yet does not stop it: the
// proxy serves meanwhile (an empty tool list, tools/call answered with a
// structured upstream_unavailable result) and fills the list in, telling
// every session, once the upstream answers.
func New(ctx context.Context, opts Options) (*Proxy, error) {
	if opts.Config == nil {
		return nil, fmt.Errorf("proxy: no configuration")
	}
	cfg := opts.Config
	p := &Proxy{
		cfg:    cfg,
		opts:   opts,
		logger: opts.Logger,
		sealer: opts.Sealer,
		ready:  make(chan struct{}),
	}
	p.bgCtx, p.bgCancel = context.WithCancel(context.Background())
	defer close(p.ready)
	if p.logger == nil {
		p.logger = slog.New(slog.DiscardHandler)
	}
	if p.sealer == nil {
		p.sealer = plan.NewRandomSealer()
	}
	p.planner = plan.New(cfg)
	p.impl = &mcp.Implementation{Name: cfg.Proxy.Name, Version: opts.Version}
	if p.impl.Version == "" {
		p.impl.Version = "devel"
	}
	up, err := dialUpstream(ctx, upstreamOptions{
		Upstream:            cfg.Upstream,
		Dir:                 opts.UpstreamDir,
		Stderr:              opts.UpstreamStderr,
		Client:              p.impl,
		Logger:              p.logger,
		ToolListChanged:     p.upstreamToolsChanged,
		Progress:            p.forwardProgress,
		CreateMessage:       p.relayCreateMessage,
		Elicit:              p.relayElicit,
		ListRoots:           p.relayListRoots,
		Logging:             p.relayLogging,
		ElicitationComplete: p.relayElicitationComplete,
		ResourceUpdated: func(ctx context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			<-p.ready
			if p.live {
				_ = p.server.ResourceUpdated(ctx, req.Params)
			}
		},
		PromptListChanged:   func() { p.listChanged(promptsChanged) },
		ResourceListChanged: func() { p.listChanged(resourcesChanged) },
	})
	if err != nil {
		return nil, err
	}
	p.up = up
	sopts := &mcp.ServerOptions{
		Logger:             p.logger,
		SubscribeHandler:   p.subscribe,
		UnsubscribeHandler: p.unsubscribe,
		RootsListChangedHandler: func(context.Context, *mcp.RootsListChangedRequest) {
			p.up.NotifyRootsChanged()
		},
	}
	cs, err := up.Session()
	if err == nil {
		init := cs.InitializeResult()
		sopts.Instructions = init.Instructions
		sopts.Capabilities = serverCapabilities(init.Capabilities)
	} else {
		// Not reachable yet: offer everything the proxy passes through;
		// what the upstream lacks it will refuse itself.
		sopts.Capabilities = serverCapabilities(&mcp.ServerCapabilities{
			Prompts: &mcp.PromptCapabilities{}, Resources: &mcp.ResourceCapabilities{}, Completions: &mcp.CompletionCapabilities{},
		})
	}
	p.server = mcp.NewServer(p.impl, sopts)
	p.server.AddReceivingMiddleware(p.middleware)
	if cs != nil {
		if err := p.refreshTools(ctx); err != nil {
			// The list is read again when the upstream reconnects or
			// reports a change.
			p.logger.Error("reading the upstream tool list failed", "err", err)
		}
	}
	p.live = true
	return p, nil
}

// serverCapabilities mirrors what the upstream offers and the proxy passes
// through: tools, prompts and resources (whose list changes are passed on),
// resource subscriptions, completions and logging.
func serverCapabilities(up *mcp.ServerCapabilities) *mcp.ServerCapabilities {
	caps := &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}}
	if up == nil {
		return caps
	}
	if up.Prompts != nil {
		caps.Prompts = &mcp.PromptCapabilities{ListChanged: true}
	}
	if up.Resources != nil {
		caps.Resources = &mcp.ResourceCapabilities{ListChanged: true, Subscribe: up.Resources.Subscribe}
	}
	if up.Completions != nil {
		caps.Completions = &mcp.CompletionCapabilities{}
	}
	if up.Logging != nil {
		caps.Logging = &mcp.LoggingCapabilities{}
	}
	return caps
}

// Planner returns the planner that decides every call, for gates to be
// added with Use before the proxy serves.
func (p *Proxy) Planner() *plan.Planner { return p.planner }

// CallUpstream calls an upstream tool on the proxy's own behalf (the human
// gate's candidate sources), not on a downstream client's.
func (p *Proxy) CallUpstream(ctx context.Context, name string, args json.RawMessage) (*mcp.CallToolResult, error) {
	cs, err := p.up.Session()
	if err != nil {
		return nil, p.upstreamUnavailable(err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return nil, p.upstreamError(err)
	}
	return res, nil
}

// Server returns the proxy's MCP server, to be run on any transport.
func (p *Proxy) Server() *mcp.Server { return p.server }

// UpstreamPID returns the process id of a stdio upstream, or 0.
func (p *Proxy) UpstreamPID() int { return p.up.ChildPID() }

// HTTPHandler serves MCP over streamable HTTP to any number of clients
// through the one upstream connection. Clients of the stateful protocols
// (up to 2025-11-25) get sessions, so the proxy can send them elicitation
// requests; 2026-07-28 clients are served statelessly and answer
// elicitations through multi round-trip results. Sessions idle out after
// Options.SessionIdle and are capped by Options.SessionCap; every body is
// bounded by Options.MaxBodyBytes.
func (p *Proxy) HTTPHandler() http.Handler {
	idle, maxBody := p.opts.SessionIdle, p.opts.MaxBodyBytes
	switch {
	case idle == 0:
		idle = DefaultSessionIdle
	case idle < 0:
		idle = 0
	}
	if maxBody <= 0 {
		maxBody = DefaultMaxBodyBytes
	}
	getServer := func(*http.Request) *mcp.Server { return p.server }
	var stateful http.Handler = mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{Logger: p.logger, SessionTimeout: idle, MaxRequestBodyBytes: maxBody})
	if p.opts.SessionCap != nil {
		stateful = p.opts.SessionCap(p.server, stateful)
	}
	stateless := mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{
		Logger:              p.logger,
		Stateless:           true,
		MaxRequestBodyBytes: maxBody,
		// The POST is the whole request: a client that hangs up cancels it,
		// and the cancellation is passed upstream.
		PropagateRequestCancellation: true,
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Who the request comes from, as the session cap counts it (the
		// gate tells clients apart by it); a value the client sent is
		// replaced.
		r.Header.Set(principalHeader, mcptools.Principal(r))
		if r.Header.Get("Mcp-Protocol-Version") >= protocolMultiRoundTrip {
			stateless.ServeHTTP(w, r)
			return
		}
		stateful.ServeHTTP(w, r)
	})
}

// Close disconnects from the upstream; a stdio upstream's process group is
// terminated.
func (p *Proxy) Close() error {
	p.bgMu.Lock()
	p.closed = true
	p.bgCancel()
	p.bgMu.Unlock()
	err := p.up.Close()
	p.bg.Wait()
	return err
}

// background runs f on its own goroutine with a context that ends when the
// proxy closes; Close waits for it. After Close, f does not run.
func (p *Proxy) background(f func(ctx context.Context)) {
	p.bgMu.Lock()
	defer p.bgMu.Unlock()
	if p.closed {
		return
	}
	p.bg.Add(1)
	go func() {
		defer p.bg.Done()
		f(p.bgCtx)
	}()
}
