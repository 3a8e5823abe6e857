package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/proxy/rawjson"
	"github.com/mcp-elicitation/elicitation/internal/proxy/required"
)

// The fast path forwards a complete tools/call from a downstream stdio
// session to a stdio upstream as JSON-RPC bytes: the request's params go
// upstream as received (only _meta's io.modelcontextprotocol/* keys are
// removed, in place), under a proxy-owned ID, and the upstream's response
// comes back under the client's ID. It skips the SDK's typed decoding and
// encoding of the call on both sides, which is most of the proxy's cost per
// call; the result is the same the SDK path gives (which also passes the
// upstream's raw result on).
//
// Only calls the SDK path would forward untouched take it: the session has
// completed its initialize handshake on a protocol before 2026-07-28, the
// tool is in the cached listing, the params hold only name, arguments and
// _meta, the arguments are a JSON object with every required field present,
// and _meta carries no progress token. Everything else (and everything
// while the upstream is down) goes through the SDK, unchanged.

// WrapTransport returns t with the fast path for complete tool calls. Wrap
// the transport of a stdio-like downstream session (one JSON-RPC peer per
// connection); the fast path is used only with a stdio upstream.
func (p *Proxy) WrapTransport(t mcp.Transport) mcp.Transport {
	return &fastTransport{Transport: t, p: p}
}

type fastTransport struct {
	mcp.Transport
	p *Proxy
}

func (t *fastTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &fastConn{Connection: c, p: t.p}, nil
}

// fastConn is a downstream connection that answers complete tool calls
// itself, and passes every other message to the SDK.
type fastConn struct {
	mcp.Connection
	p *Proxy

	mu          sync.Mutex
	initID      *jsonrpc.ID // the initialize request's ID, until answered
	protocol    string      // the version initialize negotiated
	initialized bool        // notifications/initialized was received
	discoverID  *jsonrpc.ID // the server/discover request's ID, until answered
	discovered  bool        // server/discover succeeded (2026-07-28)
	pending     map[jsonrpc.ID]*fastCall
	closed      bool
}

// fastCall is one tool call in flight on the fast path.
type fastCall struct {
	id     jsonrpc.ID
	cancel func(reason string) // set once sent
}

func (c *fastConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		msg, err := c.Connection.Read(ctx)
		if err != nil {
			c.abandonAll()
			return msg, err
		}
		req, ok := msg.(*jsonrpc.Request)
		if !ok {
			return msg, nil
		}
		switch req.Method {
		case "tools/call":
			if c.tryFast(req) {
				continue
			}
		case "notifications/cancelled":
			c.cancelled(req)
		case "initialize":
			if req.IsCall() {
				c.mu.Lock()
				id := req.ID
				c.initID, c.protocol, c.initialized = &id, "", false
				c.mu.Unlock()
			}
		case "server/discover":
			if req.IsCall() {
				c.mu.Lock()
				id := req.ID
				c.discoverID = &id
				c.mu.Unlock()
			}
		case "notifications/initialized":
			c.mu.Lock()
			c.initialized = c.protocol != ""
			c.mu.Unlock()
		}
		return msg, nil
	}
}

func (c *fastConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if resp, ok := msg.(*jsonrpc.Response); ok {
		c.mu.Lock()
		if c.discoverID != nil && *c.discoverID == resp.ID {
			c.discoverID = nil
			c.discovered = c.discovered || resp.Error == nil
		}
		if c.initID != nil && *c.initID == resp.ID {
			c.initID = nil
			var res struct {
				ProtocolVersion string `json:"protocolVersion"`
			}
			if resp.Error == nil && json.Unmarshal(resp.Result, &res) == nil {
				c.protocol = res.ProtocolVersion
			}
		}
		c.mu.Unlock()
	}
	return c.Connection.Write(ctx, msg)
}

func (c *fastConn) Close() error {
	c.abandonAll()
	return c.Connection.Close()
}

// tryFast forwards req on the fast path and reports whether it did.
func (c *fastConn) tryFast(req *jsonrpc.Request) bool {
	if !req.IsCall() {
		return false
	}
	params, perRequest, ok := c.p.fastParams(req.Params)
	if !ok {
		return false
	}
	c.mu.Lock()
	if perRequest {
		// A 2026-07-28 request carries its protocol in _meta; the SDK
		// takes the session's state from server/discover (or initialize).
		ok = c.discovered || c.initialized
	} else {
		ok = c.initialized && c.protocol != "" && c.protocol < protocolMultiRoundTrip
	}
	_, dup := c.pending[req.ID]
	ok = ok && !dup && !c.closed
	c.mu.Unlock()
	if !ok {
		return false
	}
	fc := &fastCall{id: req.ID}
	c.mu.Lock()
	if c.pending == nil {
		c.pending = map[jsonrpc.ID]*fastCall{}
	}
	c.pending[req.ID] = fc
	c.mu.Unlock()
	cancel, err := c.p.up.RawCall("tools/call", params, func(resp *jsonrpc.Response, err error) {
		if !c.finish(fc) {
			return
		}
		out := &jsonrpc.Response{ID: fc.id}
		switch {
		case err != nil:
			out.Error = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "upstream MCP server: " + err.Error()}
		case resp.Error != nil:
			out.Error = resp.Error
		case perRequest:
			// What the SDK path adds for a 2026-07-28 request: the
			// result type and the server's identity.
			rr := &rawResult{raw: resp.Result, addResultType: true}
			rr.Meta = mcp.Meta{mcp.MetaKeyServerInfo: c.p.impl}
			b, merr := rr.MarshalJSON()
			if merr != nil {
				out.Error = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: merr.Error()}
			} else {
				out.Result = b
			}
		default:
			out.Result = resp.Result
		}
		if werr := c.Connection.Write(context.Background(), out); werr != nil {
			c.p.logger.Debug("writing a forwarded tool result failed", "error", werr)
		}
	})
	if err != nil {
		// The upstream is down or not on stdio: the SDK path answers.
		c.finish(fc)
		return false
	}
	c.mu.Lock()
	fc.cancel = cancel
	c.mu.Unlock()
	c.p.fastCalls.Add(1)
	return true
}

// finish removes fc from the calls in flight and reports whether it was
// still there (the call had neither been answered nor cancelled).
func (c *fastConn) finish(fc *fastCall) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pending[fc.id] != fc {
		return false
	}
	delete(c.pending, fc.id)
	return true
}

// cancelled handles the client's notifications/cancelled for a fast call
// as the SDK path does: the upstream call is cancelled and the client gets
// the error response the SDK writes for a cancelled request. The
// notification is then passed to the SDK as well, which ignores an ID it
// does not know.
func (c *fastConn) cancelled(req *jsonrpc.Request) {
	var params struct {
		RequestID any `json:"requestId"`
	}
	if json.Unmarshal(req.Params, &params) != nil {
		return
	}
	id, err := jsonrpc.MakeID(params.RequestID) // as the SDK reads it
	if err != nil {
		return
	}
	c.mu.Lock()
	fc := c.pending[id]
	if fc != nil {
		delete(c.pending, id)
	}
	c.mu.Unlock()
	if fc == nil {
		return
	}
	if fc.cancel != nil {
		fc.cancel(context.Canceled.Error())
	}
	_ = c.Connection.Write(context.Background(), &jsonrpc.Response{ID: fc.id, Error: context.Canceled})
}

// abandonAll cancels every fast call in flight upstream when the client
// has gone, as the SDK path cancels its handlers.
func (c *fastConn) abandonAll() {
	c.mu.Lock()
	c.closed = true
	pending := c.pending
	c.pending = nil
	c.mu.Unlock()
	for _, fc := range pending {
		if fc.cancel != nil {
			fc.cancel(context.Canceled.Error())
		}
	}
}

// fastParams returns the params to send upstream for a tools/call the
// proxy would forward untouched, and whether the request follows the
// 2026-07-28 per-request protocol (its _meta names the protocol), or false
// if the call must take the SDK path.
func (p *Proxy) fastParams(raw json.RawMessage) (params []byte, perRequest, ok bool) {
	obj, err := rawjson.ParseObject(raw)
	if err != nil {
		return nil, false, false
	}
	var name string
	var args, meta json.RawMessage
	for _, m := range obj.Members {
		switch m.Key {
		case "name":
			if json.Unmarshal(m.Value, &name) != nil {
				return nil, false, false
			}
		case "arguments":
			args = m.Value
		case "_meta":
			meta = m.Value
		default:
			// inputResponses, requestState, or anything the SDK path
			// would drop.
			return nil, false, false
		}
	}
	t, known := p.tools.get(name)
	if name == "" || !known || len(args) == 0 {
		return nil, false, false
	}
	argObj, err := rawjson.ParseObject(args)
	if err != nil {
		return nil, false, false
	}
	var schemaRequired []string
	if p.cfg.Policies.SchemaRequired.Enabled {
		schemaRequired = t.schemaRequired
	}
	if len(required.Missing(argObj, required.Fields(schemaRequired, p.cfg.Tools[name].Required))) > 0 {
		return nil, false, false
	}
	if meta == nil {
		return raw, false, true
	}
	metaObj, err := rawjson.ParseObject(meta)
	if err != nil {
		return nil, false, false
	}
	if _, ok := metaObj.Get("progressToken"); ok {
		return nil, false, false
	}
	perRequest, ok = perRequestProtocol(metaObj)
	if !ok {
		return nil, false, false
	}
	kept := &rawjson.Object{}
	for _, m := range metaObj.Members {
		if !strings.HasPrefix(m.Key, "io.modelcontextprotocol/") {
			kept.Members = append(kept.Members, m)
		}
	}
	if len(kept.Members) == len(metaObj.Members) && len(kept.Members) > 0 {
		return raw, perRequest, true
	}
	if len(kept.Members) == 0 {
		obj.Delete("_meta")
	} else {
		b, err := kept.MarshalJSON()
		if err != nil {
			return nil, false, false
		}
		obj.Set("_meta", b)
	}
	b, err := obj.MarshalJSON()
	if err != nil {
		return nil, false, false
	}
	return b, perRequest, true
}

// perRequestProtocol reports whether a request's _meta selects the
// 2026-07-28 protocol, as the SDK decides it, and whether the fast path
// may take the request: a later version, or per-request client
// information the SDK would refuse, goes through the SDK.
func perRequestProtocol(meta *rawjson.Object) (perRequest, ok bool) {
	v, present := meta.Get(mcp.MetaKeyProtocolVersion)
	var version string
	if !present || json.Unmarshal(v, &version) != nil || version < protocolMultiRoundTrip {
		return false, true
	}
	if version != protocolMultiRoundTrip {
		return false, false
	}
	caps, present := meta.Get(mcp.MetaKeyClientCapabilities)
	var c struct {
		mcp.ClientCapabilities
		Roots *struct {
			ListChanged bool `json:"listChanged,omitempty"`
		} `json:"roots,omitempty"`
	}
	if !present || !isObject(caps) || json.Unmarshal(caps, &c) != nil {
		return false, false
	}
	if info, present := meta.Get(mcp.MetaKeyClientInfo); present {
		var impl mcp.Implementation
		if !isObject(info) || json.Unmarshal(info, &impl) != nil {
			return false, false
		}
	}
	return true, true
}

func isObject(v json.RawMessage) bool {
	v = bytes.TrimSpace(v)
	return len(v) > 0 && v[0] == '{'
}
