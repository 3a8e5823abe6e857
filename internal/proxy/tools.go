package proxy

//lint:file-ignore SA1019 sampling, roots and logging are deprecated as of 2026-07-28 (SEP-2577) but in their deprecation window; the proxy relays them for the clients and servers that still use them, as the original does.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/proxy/plan"
)

// protocolMultiRoundTrip is the first protocol version whose clients answer
// input requests by retrying the call (SEP-2322) and have no session.
const protocolMultiRoundTrip = "2026-07-28"

// maxListPages bounds how many pages of tools/list the proxy reads.
const maxListPages = 100

// toolCache holds the upstream's listing: every page as raw bytes, keyed by
// the cursor that fetched it, and every tool by name.
type toolCache struct {
	mu    sync.RWMutex
	pages map[string]json.RawMessage
	tools map[string]*plan.Tool
}

func (c *toolCache) get(name string) (*plan.Tool, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	t, ok := c.tools[name]
	return t, ok
}

// loaded reports whether a listing was ever read.
func (c *toolCache) loaded() bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.pages != nil
}

func (c *toolCache) page(cursor string) (json.RawMessage, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	raw, ok := c.pages[cursor]
	return raw, ok
}

// upstreamToolsChanged follows the upstream's tools/list_changed (and
// reconnections): the list is read again and the change passed on to every
// downstream session. It runs asynchronously because it is called on the
// upstream connection's read loop, which the refresh needs.
func (p *Proxy) upstreamToolsChanged() {
	p.background(func(ctx context.Context) {
		<-p.ready
		if !p.live {
			return
		}
		ctx, cancel := context.WithTimeout(ctx, defaultUpstreamTimeout)
		defer cancel()
		if err := p.refreshTools(ctx); err != nil && p.bgCtx.Err() == nil {
			// (a refresh that the proxy's closing ends is not a failure)
			p.logger.Error("refreshing the upstream tool list failed", "err", err)
		}
		p.resubscribe(ctx)
	})
}

// refreshTools reads every page of the upstream's tool list and registers
// each tool with the proxy's server, which notifies downstream sessions.
func (p *Proxy) refreshTools(ctx context.Context) error {
	p.refreshMu.Lock()
	defer p.refreshMu.Unlock()
	cs, err := p.up.Session()
	if err != nil {
		return err
	}
	pages := map[string]json.RawMessage{}
	tools := map[string]*plan.Tool{}
	var order []*plan.Tool
	cursor := ""
	for range maxListPages {
		raw, err := listToolsRaw(ctx, cs, cursor)
		if err != nil {
			return err
		}
		pages[cursor] = raw
		var page struct {
			Tools      []json.RawMessage `json:"tools"`
			NextCursor string            `json:"nextCursor"`
		}
		if err := json.Unmarshal(raw, &page); err != nil {
			return fmt.Errorf("reading upstream tools/list result: %w", err)
		}
		for _, rt := range page.Tools {
			t, err := plan.ParseTool(rt)
			if err != nil {
				p.logger.Warn("skipping an upstream tool the proxy cannot read", "err", err)
				continue
			}
			if _, dup := tools[t.Name]; !dup {
				order = append(order, t)
			}
			tools[t.Name] = t
		}
		if page.NextCursor == "" {
			break
		}
		if _, seen := pages[page.NextCursor]; seen {
			break
		}
		cursor = page.NextCursor
	}

	p.tools.mu.Lock()
	old := p.tools.tools
	p.tools.pages, p.tools.tools = pages, tools
	p.tools.mu.Unlock()

	var gone []string
	for name := range old {
		if _, ok := tools[name]; !ok {
			gone = append(gone, name)
		}
	}
	if len(gone) > 0 {
		p.server.RemoveTools(gone...)
	}
	for _, t := range order {
		p.register(t)
	}
	p.logger.Debug("upstream tool list read", "tools", len(order), "pages", len(pages))
	return nil
}

// listToolsRaw fetches one page of the upstream's tools/list as raw bytes.
func listToolsRaw(ctx context.Context, cs *mcp.ClientSession, cursor string) (json.RawMessage, error) {
	ctx, sink := withSink(ctx)
	if _, err := cs.ListTools(ctx, &mcp.ListToolsParams{Cursor: cursor}); err != nil {
		return nil, fmt.Errorf("listing upstream tools: %w", err)
	}
	raw := sink.Result()
	if raw == nil {
		return nil, errors.New("listing upstream tools: the raw result was not captured")
	}
	return raw, nil
}

// register adds the tool to the proxy's server so that the SDK routes its
// calls to the proxy. The SDK's copy is used only for routing and header
// validation; tools/list is answered from the raw listing.
func (p *Proxy) register(t *plan.Tool) {
	handler := func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return p.callTool(ctx, req)
	}
	if err := addTool(p.server, &mcp.Tool{Name: t.Name, InputSchema: t.InputSchema}, handler); err != nil {
		// The SDK refuses some schemas that upstreams send (a type other
		// than "object", malformed header annotations). Route the tool
		// anyway: its listing is passed on unchanged regardless.
		p.logger.Warn("the SDK refused an upstream input schema; routing the tool with a permissive one", "tool", t.Name, "err", err)
		_ = addTool(p.server, &mcp.Tool{Name: t.Name, InputSchema: json.RawMessage(`{"type":"object"}`)}, handler)
	}
}

func addTool(s *mcp.Server, t *mcp.Tool, h mcp.ToolHandler) (err error) {
	if len(t.InputSchema.(json.RawMessage)) == 0 {
		return errors.New("no input schema")
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	s.AddTool(t, h)
	return nil
}

// middleware answers discovery from the upstream's raw results and makes
// tools/call results the upstream's raw results.
func (p *Proxy) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "tools/list":
			return p.listTools(ctx, req)
		case "tools/call":
			if params, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok {
				if _, err := p.ensureUpstream(ctx); err != nil {
					return unavailableResult(params.Name, p.up.Describe()), nil
				}
				if _, known := p.tools.get(params.Name); !known {
					// Perhaps a tool added since the last list_changed.
					if err := p.refreshTools(ctx); err != nil {
						p.logger.Warn("refreshing the upstream tool list failed", "err", err)
					}
				}
			}
			ctx, holder := withRawHolder(ctx)
			res, err := next(ctx, method, req)
			if err != nil {
				return res, err
			}
			if raw := holder.Result(); raw != nil {
				return newRawResult(raw, req), nil
			}
			return res, nil
		case "prompts/list", "prompts/get", "resources/list", "resources/templates/list", "resources/read", "completion/complete":
			return p.passThrough(ctx, method, req)
		case "logging/setLevel":
			// The session keeps its own level (which filters what it is
			// sent); the upstream gets the latest level asked for.
			if params, ok := req.GetParams().(*mcp.SetLoggingLevelParams); ok {
				if cs, err := p.up.Session(); err == nil {
					if err := cs.SetLoggingLevel(ctx, cleanParams(params)); err != nil {
						p.logger.Debug("passing logging/setLevel upstream failed", "err", err)
					}
				}
			}
		}
		return next(ctx, method, req)
	}
}

func (p *Proxy) listTools(ctx context.Context, req mcp.Request) (mcp.Result, error) {
	cursor := ""
	if params, ok := req.GetParams().(*mcp.ListToolsParams); ok && params != nil {
		cursor = params.Cursor
	}
	if raw, ok := p.tools.page(cursor); ok {
		return newRawResult(raw, req), nil
	}
	if cursor == "" && !p.tools.loaded() {
		// The upstream has never answered: connect on demand, so that a
		// client listing right after the upstream came up sees its tools.
		if _, err := p.ensureUpstream(ctx); err == nil {
			if err := p.refreshTools(ctx); err != nil {
				p.logger.Warn("reading the upstream tool list failed", "err", err)
			}
			if raw, ok := p.tools.page(cursor); ok {
				return newRawResult(raw, req), nil
			}
		}
	}
	cs, err := p.up.Session()
	switch {
	case err != nil && cursor == "" && !p.tools.loaded():
		// The upstream has not answered yet: no tools so far; the list
		// fills in, with tools/list_changed, once it does.
		return newRawResult(json.RawMessage(`{"tools":[]}`), req), nil
	case err != nil:
		return nil, p.upstreamUnavailable(err)
	}
	// A cursor the cache does not know (the list changed meanwhile): ask
	// the upstream.
	raw, err := listToolsRaw(ctx, cs, cursor)
	if err != nil {
		return nil, p.upstreamError(err)
	}
	return newRawResult(raw, req), nil
}

// connectOnDemand bounds how long a request waits for the upstream to be
// connected on demand (upstreamConn.Ensure): one attempt, normally; an
// upstream still down answers at once (connection refused).
const connectOnDemand = 5 * time.Second

// ensureUpstream is the upstream session, connected on demand while it is
// down.
func (p *Proxy) ensureUpstream(ctx context.Context) (*mcp.ClientSession, error) {
	if cs, err := p.up.Session(); err == nil {
		return cs, nil // connected: no timer on a call's path
	}
	ctx, cancel := context.WithTimeout(ctx, connectOnDemand)
	defer cancel()
	return p.up.Ensure(ctx)
}

// passThrough forwards a prompts, resources or completion request and
// returns the upstream's raw result.
func (p *Proxy) passThrough(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
	cs, err := p.up.Session()
	if err != nil {
		return nil, p.upstreamUnavailable(err)
	}
	ctx, sink := withSink(ctx)
	switch params := req.GetParams().(type) {
	case *mcp.ListPromptsParams:
		_, err = cs.ListPrompts(ctx, cleanParams(params))
	case *mcp.GetPromptParams:
		_, err = cs.GetPrompt(ctx, cleanParams(params))
	case *mcp.ListResourcesParams:
		_, err = cs.ListResources(ctx, cleanParams(params))
	case *mcp.ListResourceTemplatesParams:
		_, err = cs.ListResourceTemplates(ctx, cleanParams(params))
	case *mcp.ReadResourceParams:
		_, err = cs.ReadResource(ctx, cleanParams(params))
	case *mcp.CompleteParams:
		_, err = cs.Complete(ctx, cleanParams(params))
	default:
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("%s: unexpected parameters", method)}
	}
	if err != nil {
		return nil, p.upstreamError(err)
	}
	raw := sink.Result()
	if raw == nil {
		return nil, fmt.Errorf("%s: the upstream's raw result was not captured", method)
	}
	return newRawResult(raw, req), nil
}

// cleanParams returns a copy of params whose _meta lacks the downstream's
// protocol keys. A nil params stays nil.
func cleanParams[P any, PP interface {
	*P
	mcp.Params
}](params PP) PP {
	if params == nil {
		return nil
	}
	cp := PP(new(P))
	*cp = *params
	cp.SetMeta(cleanMeta(params.GetMeta()))
	return cp
}

// cleanMeta drops the io.modelcontextprotocol/* keys (the downstream's
// protocol version, capabilities and identity) from a request's _meta: the
// upstream speaks its own protocol version and refuses foreign ones.
func cleanMeta(meta map[string]any) map[string]any {
	if meta == nil {
		return nil
	}
	out := make(map[string]any, len(meta))
	for k, v := range meta {
		if plan.UpstreamMetaKey(k) {
			out[k] = v
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// rawHolderKey holds the sink that carries a tools/call's raw upstream
// result from the tool handler back to the middleware (its own key: the
// handler's other upstream requests must not fill it).
type rawHolderKey struct{}

func withRawHolder(ctx context.Context) (context.Context, *rawSink) {
	h := &rawSink{}
	return context.WithValue(ctx, rawHolderKey{}, h), h
}

func rawHolderFrom(ctx context.Context) *rawSink {
	h, _ := ctx.Value(rawHolderKey{}).(*rawSink)
	return h
}

// rawResult is an upstream result passed on as the bytes the upstream sent,
// plus what the downstream's protocol requires and the upstream's may lack:
// "resultType" for 2026-07-28 clients, and _meta keys the SDK adds.
type rawResult struct {
	mcp.ResultBase
	raw           json.RawMessage
	addResultType bool
}

func newRawResult(raw json.RawMessage, req mcp.Request) *rawResult {
	return &rawResult{raw: raw, addResultType: requestProtocol(req) >= protocolMultiRoundTrip}
}

func requestProtocol(req mcp.Request) string {
	type versioned interface{ ProtocolVersion() string }
	if v, ok := req.(versioned); ok {
		return v.ProtocolVersion()
	}
	return ""
}

func (r *rawResult) MarshalJSON() ([]byte, error) {
	if !r.addResultType && len(r.Meta) == 0 {
		return r.raw, nil
	}
	obj, err := plan.ParseObject(r.raw)
	if err != nil {
		return nil, fmt.Errorf("passing on upstream result: %w", err)
	}
	if _, ok := obj.Get("resultType"); r.addResultType && !ok {
		obj.Set("resultType", json.RawMessage(`"complete"`))
	}
	if len(r.Meta) > 0 {
		meta := &plan.Object{}
		if old, ok := obj.Get("_meta"); ok {
			if m, err := plan.ParseObject(old); err == nil {
				meta = m
			}
		}
		for k, v := range r.Meta {
			if _, ok := meta.Get(k); ok {
				continue
			}
			b, err := plan.Marshal(v)
			if err != nil {
				return nil, err
			}
			meta.Set(k, b)
		}
		b, err := meta.MarshalJSON()
		if err != nil {
			return nil, err
		}
		obj.Set("_meta", b)
	}
	return obj.MarshalJSON()
}

// upstreamError returns an upstream JSON-RPC error unchanged (code, message
// and data), and wraps anything else, without the credentials of the
// upstream's URL (an HTTP client's error quotes the URL it failed to reach).
// No error is nil.
func (p *Proxy) upstreamError(err error) error {
	if err == nil {
		return nil
	}
	var we *jsonrpc.Error
	if errors.As(err, &we) {
		return we
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "upstream MCP server: " + p.up.redact(err.Error())}
}

// unavailableResult answers a tool call made while the upstream is not
// connected (not reachable yet, or being reconnected): a tool error with a
// structured payload in the shape of the proxy's other results.
func unavailableResult(tool, upstream string) *mcp.CallToolResult {
	o := &plan.Outcome{
		Error: "upstream_unavailable", Tool: tool, Status: "unavailable", Reason: "upstream_not_connected",
		Message: fmt.Sprintf("The tool %s was not called: the upstream MCP server (%s) is not connected yet; the proxy keeps trying. Call the tool again shortly.", tool, upstream),
	}
	res := o.Result()
	res.IsError = true
	return res
}

// upstreamUnavailable answers a request while the upstream is not
// connected: why, without the credentials of the upstream's URL.
func (p *Proxy) upstreamUnavailable(err error) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: p.up.redact(err.Error())}
}
