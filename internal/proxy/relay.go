package proxy

//lint:file-ignore SA1019 sampling, roots and logging are deprecated as of 2026-07-28 (SEP-2577) but in their deprecation window; the proxy relays them for the clients and servers that still use them, as the original does.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The proxy is transparent both ways, as the FastMCP proxy the original
// delegates to: it declares sampling, elicitation and roots to its upstream
// and relays the upstream's own requests to the downstream client whose
// tool call they belong to, and passes the upstream's notifications on.
//
// The upstream connection is shared by every downstream session, and an
// upstream request carries nothing that names the call it serves. So it
// goes to the session with tool calls in flight when there is exactly one
// such session (always, on stdio), or, outside any call, to the only
// connected session; otherwise it is refused rather than guessed. A
// session that did not declare the capability, or a 2026-07-28 client
// (which receives no requests from a server), gets a clean refusal.

// relay tracks the forwarded tool calls in flight by downstream session.
type relay struct {
	mu    sync.Mutex
	calls map[*mcp.ServerSession][]*inflight
	// urls maps the id of a URL elicitation relayed to a session to that
	// session, for the upstream's notifications/elicitation/complete.
	urls map[string]*mcp.ServerSession
}

type inflight struct {
	ctx      context.Context // the downstream request's
	protocol string
}

// track registers a forwarded call until the returned function is called.
func (r *relay) track(ctx context.Context, req *mcp.CallToolRequest) func() {
	if req.Session == nil {
		return func() {}
	}
	f := &inflight{ctx: ctx, protocol: req.ProtocolVersion()}
	r.mu.Lock()
	if r.calls == nil {
		r.calls = map[*mcp.ServerSession][]*inflight{}
	}
	r.calls[req.Session] = append(r.calls[req.Session], f)
	r.mu.Unlock()
	return func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		list := slices.DeleteFunc(r.calls[req.Session], func(g *inflight) bool { return g == f })
		if len(list) == 0 {
			delete(r.calls, req.Session)
		} else {
			r.calls[req.Session] = list
		}
	}
}

// errNoClient is the refusal of an upstream request the proxy cannot
// attribute or relay.
func errNoClient(format string, args ...any) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "mcp-elicitation-proxy: " + fmt.Sprintf(format, args...)}
}

// route finds the downstream session an upstream request belongs to, and
// the context to relay it under (ended with the downstream call). An HTTP
// upstream names the call: its request arrives on the call's response
// stream (upstreamConn.CallerOf); otherwise the rule above applies.
func (p *Proxy) route(ctx context.Context, what string, params any) (*mcp.ServerSession, context.Context, context.CancelFunc, error) {
	p.relay.mu.Lock()
	var ss *mcp.ServerSession
	var calls []*inflight
	n := 0
	if params != nil {
		if c, ok := p.up.CallerOf(what, params); ok {
			if s, ok := c.(*mcp.ServerSession); ok {
				if list, ok := p.relay.calls[s]; ok {
					ss, calls, n = s, list, 1
				}
			}
		}
	}
	if n == 0 {
		for s, list := range p.relay.calls {
			ss, calls, n = s, list, n+1
		}
	}
	p.relay.mu.Unlock()
	switch {
	case n > 1:
		return nil, nil, nil, errNoClient("%s: tool calls of several clients are in flight, so the request cannot be attributed to one of them", what)
	case n == 0:
		var only []*mcp.ServerSession
		for s := range p.server.Sessions() {
			only = append(only, s)
		}
		if len(only) != 1 {
			return nil, nil, nil, errNoClient("%s: no tool call is in flight and %d clients are connected", what, len(only))
		}
		ss = only[0]
	}
	rctx, cancel := context.WithCancel(ctx)
	if len(calls) > 0 {
		if calls[len(calls)-1].protocol >= protocolMultiRoundTrip {
			cancel()
			return nil, nil, nil, errNoClient("%s: the client is on protocol %s, which has no requests from a server", what, calls[len(calls)-1].protocol)
		}
		stop := context.AfterFunc(calls[len(calls)-1].ctx, cancel)
		return ss, rctx, func() { stop(); cancel() }, nil
	}
	return ss, rctx, cancel, nil
}

func clientCaps(ss *mcp.ServerSession) *mcp.ClientCapabilities {
	if ip := ss.InitializeParams(); ip != nil && ip.Capabilities != nil {
		return ip.Capabilities
	}
	return &mcp.ClientCapabilities{}
}

// relayCreateMessage passes the upstream's sampling/createMessage on.
func (p *Proxy) relayCreateMessage(ctx context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	ss, rctx, done, err := p.route(ctx, "sampling/createMessage", req.Params)
	if err != nil {
		return nil, err
	}
	defer done()
	if clientCaps(ss).Sampling == nil {
		return nil, errNoClient("sampling/createMessage: the client does not support sampling")
	}
	params := cleanParams(req.Params)
	res, err := ss.CreateMessage(rctx, params)
	return res, relayError(err)
}

// relayElicit passes the upstream's elicitation/create on, in form or URL
// mode as the client supports it.
func (p *Proxy) relayElicit(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	ss, rctx, done, err := p.route(ctx, "elicitation/create", req.Params)
	if err != nil {
		return nil, err
	}
	defer done()
	e := clientCaps(ss).Elicitation
	switch {
	case e == nil:
		return nil, errNoClient("elicitation/create: the client does not support elicitation")
	case req.Params.Mode == "url" && e.URL == nil:
		return nil, errNoClient("elicitation/create: the client does not support URL elicitation")
	case req.Params.Mode != "url" && !supportsForm(clientCaps(ss)):
		return nil, errNoClient("elicitation/create: the client does not support form elicitation")
	}
	params := cleanParams(req.Params)
	if params.Mode == "url" && params.ElicitationID != "" {
		p.relay.mu.Lock()
		if p.relay.urls == nil {
			p.relay.urls = map[string]*mcp.ServerSession{}
		}
		if len(p.relay.urls) >= maxURLElicitations {
			clear(p.relay.urls) // bounded: a lost completion is a missed notification, not a leak
		}
		p.relay.urls[params.ElicitationID] = ss
		p.relay.mu.Unlock()
	}
	res, err := ss.Elicit(rctx, params)
	return res, relayError(err)
}

// maxURLElicitations bounds the URL elicitations remembered for their
// completion notifications.
const maxURLElicitations = 1000

// relayElicitationComplete passes the upstream's
// notifications/elicitation/complete to the session that was sent the URL
// elicitation.
func (p *Proxy) relayElicitationComplete(ctx context.Context, req *mcp.ElicitationCompleteNotificationRequest) {
	p.relay.mu.Lock()
	ss := p.relay.urls[req.Params.ElicitationID]
	delete(p.relay.urls, req.Params.ElicitationID)
	p.relay.mu.Unlock()
	if ss == nil {
		return
	}
	params := cleanParams(req.Params)
	if err := ss.NotifyElicitationComplete(ctx, params); err != nil {
		p.logger.Debug("passing on elicitation/complete failed", "err", err)
	}
}

// relayListRoots passes the upstream's roots/list on.
func (p *Proxy) relayListRoots(ctx context.Context, req *mcp.ListRootsRequest) (*mcp.ListRootsResult, error) {
	ss, rctx, done, err := p.route(ctx, "roots/list", orEmpty(req.Params))
	if err != nil {
		return nil, err
	}
	defer done()
	caps := clientCaps(ss)
	if caps.RootsV2 == nil && !rootsDeclared(ss) {
		return nil, errNoClient("roots/list: the client does not support roots")
	}
	res, err := ss.ListRoots(rctx, cleanParams(orEmpty(req.Params)))
	return res, relayError(err)
}

// rootsDeclared reports whether the client's initialize named roots (the
// SDK's typed capabilities cannot tell roots: {} from no roots).
func rootsDeclared(ss *mcp.ServerSession) bool {
	ip := ss.InitializeParams()
	return ip != nil && ip.Capabilities != nil && (ip.Capabilities.RootsV2 != nil || ip.Capabilities.Roots.ListChanged)
}

// relayError keeps a client's JSON-RPC error as it is.
func relayError(err error) error {
	if err == nil {
		return nil
	}
	var we *jsonrpc.Error
	if errors.As(err, &we) {
		return we
	}
	return fmt.Errorf("relaying to the client: %w", err)
}

// relayLogging passes an upstream log message on: to the session whose
// call is in flight, else to every session (each session's level, set with
// logging/setLevel, filters it).
func (p *Proxy) relayLogging(ctx context.Context, req *mcp.LoggingMessageRequest) {
	params := cleanParams(req.Params)
	if ss, rctx, done, err := p.route(ctx, "notifications/message", nil); err == nil {
		defer done()
		_ = ss.Log(rctx, params)
		return
	}
	for ss := range p.server.Sessions() {
		_ = ss.Log(ctx, params)
	}
}

// subscriptions holds the downstream sessions subscribed to each resource
// URI: the upstream is subscribed while any session is. A session holds
// one subscription a URI (as the SDK keeps it), and its unsubscribe ends
// its own only.
type subscriptions struct {
	mu       sync.Mutex
	sessions map[string]map[*mcp.ServerSession]bool
}

func (p *Proxy) subscribe(ctx context.Context, req *mcp.SubscribeRequest) error {
	p.subs.mu.Lock()
	defer p.subs.mu.Unlock()
	p.pruneSubscriptions()
	uri := req.Params.URI
	if len(p.subs.sessions[uri]) == 0 {
		cs, err := p.up.Session()
		if err != nil {
			return p.upstreamUnavailable(err)
		}
		if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
			return p.upstreamError(err)
		}
	}
	if p.subs.sessions == nil {
		p.subs.sessions = map[string]map[*mcp.ServerSession]bool{}
	}
	if p.subs.sessions[uri] == nil {
		p.subs.sessions[uri] = map[*mcp.ServerSession]bool{}
	}
	p.subs.sessions[uri][req.Session] = true
	return nil
}

// pruneSubscriptions forgets the sessions that ended without
// unsubscribing, so that the record holds live sessions only (a resource
// none of them holds stays subscribed upstream, as when its last session
// left). Call it with p.subs.mu held.
func (p *Proxy) pruneSubscriptions() {
	live := map[*mcp.ServerSession]bool{}
	for s := range p.server.Sessions() {
		live[s] = true
	}
	for uri, held := range p.subs.sessions {
		for s := range held {
			if !live[s] {
				delete(held, s)
			}
		}
		if len(held) == 0 {
			delete(p.subs.sessions, uri)
		}
	}
}

func (p *Proxy) unsubscribe(ctx context.Context, req *mcp.UnsubscribeRequest) error {
	p.subs.mu.Lock()
	defer p.subs.mu.Unlock()
	uri := req.Params.URI
	if !p.subs.sessions[uri][req.Session] {
		return nil // not this session's: another's stays
	}
	delete(p.subs.sessions[uri], req.Session)
	if len(p.subs.sessions[uri]) > 0 {
		return nil
	}
	delete(p.subs.sessions, uri)
	cs, err := p.up.Session()
	if err != nil {
		return nil // the subscription ended with the connection
	}
	return p.upstreamError(cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri}))
}

// resubscribe renews the downstream sessions' subscriptions on a new
// upstream session (after a reconnection); on the first one there are
// none. It runs with every list refresh, which repeats a subscription the
// upstream already has: subscribing twice is harmless.
func (p *Proxy) resubscribe(ctx context.Context) {
	p.subs.mu.Lock()
	defer p.subs.mu.Unlock()
	if len(p.subs.sessions) == 0 {
		return
	}
	cs, err := p.up.Session()
	if err != nil {
		return
	}
	for uri := range p.subs.sessions {
		if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
			p.logger.Warn("renewing a resource subscription upstream failed", "err", err)
		}
	}
}

type listKind int

const (
	promptsChanged listKind = iota
	resourcesChanged
)

// listChangedName is a placeholder prompt or resource added and removed to
// make the SDK's server send prompts or resources list_changed to every
// session; the lists themselves are answered from the upstream.
const listChangedName = "mcp-elicitation-proxy:list-changed"

// listChanged passes the upstream's prompts or resources list_changed on
// to every downstream session.
func (p *Proxy) listChanged(kind listKind) {
	<-p.ready
	if !p.live {
		return
	}
	switch kind {
	case promptsChanged:
		p.server.AddPrompt(&mcp.Prompt{Name: listChangedName}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return nil, errors.New("not a prompt")
		})
		p.server.RemovePrompts(listChangedName)
	case resourcesChanged:
		p.server.AddResource(&mcp.Resource{Name: listChangedName, URI: listChangedName}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return nil, errors.New("not a resource")
		})
		p.server.RemoveResources(listChangedName)
	}
}

func orEmpty(p *mcp.ListRootsParams) *mcp.ListRootsParams {
	if p == nil {
		return &mcp.ListRootsParams{}
	}
	return p
}
