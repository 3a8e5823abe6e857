// Package stdio is the proxy's fast path on stdio: it moves complete
// tools/call requests from a downstream newline-delimited stream to a stdio
// upstream as JSON-RPC bytes, below the SDK, and their responses back.
//
// It decides nothing about a call itself: the proxy's planner says which
// calls are forwarded untouched (rawForwarder.Untouched), and the proxy shapes
// results as its SDK path does (rawForwarder.Result). What this package owns
// is the stream: which lines it may take (the session's handshake state,
// the JSON-RPC envelope, the params' keys, a progress token, a 2026-07-28
// request's _meta), the IDs, cancellation, and writing the response as the
// SDK's encoder does.
package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/proxy/plan"
)

// protocolPerRequest is the first protocol version whose requests carry
// their protocol in _meta and have no session.
const protocolPerRequest = "2026-07-28"

// rawForwarder is the proxy, as the fast path uses it (fastForwarder;
// a fake in stdio_test.go).
type rawForwarder interface {
	// Untouched reports whether the proxy forwards a call of the named
	// tool with these raw arguments untouched (the planner's Forward
	// without changes, for a tool in the listing).
	Untouched(name string, args json.RawMessage) bool
	// RawCall sends a request with raw params to the stdio upstream and
	// calls done with its response; it fails, sending nothing, while the
	// upstream is down or not on stdio.
	RawCall(method string, params []byte, done func(*jsonrpc.Response, error)) (cancel func(reason string), err error)
	// Result shapes the upstream's raw result for the client as the SDK
	// path does (perRequest: a 2026-07-28 request).
	Result(raw json.RawMessage, perRequest bool) (json.RawMessage, error)
	// Logger receives the fast path's debug logs.
	Logger() *slog.Logger
}

// WrapTransport returns t with the stdio fast path for complete tool calls
// when t is an *mcp.IOTransport (stdio, or any newline-delimited stream
// with one peer); any other transport is returned as it is. The fast path
// forwards only the calls the planner forwards untouched; it moves their
// bytes below the SDK (below).
func (p *Proxy) WrapTransport(t mcp.Transport) mcp.Transport {
	return wrapFast(t, fastForwarder{p}, &p.fastCalls)
}

// fastForwarder is the proxy as the fast path sees it.
type fastForwarder struct{ p *Proxy }

// Untouched asks the planner. The fast path does not know the client's
// capabilities, and needs not: a Forward plan never depends on them.
func (f fastForwarder) Untouched(name string, args json.RawMessage) bool {
	c := f.p.planCall(name, args, nil, "")
	if c.Tool == nil {
		return false
	}
	pl := f.p.planner.Plan(c)
	return pl.Action == plan.Forward && pl.Args == nil
}

func (f fastForwarder) RawCall(method string, params []byte, done func(*jsonrpc.Response, error)) (func(string), error) {
	return f.p.up.RawCall(method, params, done)
}

// Result is the SDK path's shaping of a raw tools/call result.
func (f fastForwarder) Result(raw json.RawMessage, perRequest bool) (json.RawMessage, error) {
	if !perRequest {
		return raw, nil
	}
	// What the SDK adds for a 2026-07-28 request: the result type and the
	// server's identity.
	rr := &rawResult{raw: raw, addResultType: true}
	rr.Meta = mcp.Meta{mcp.MetaKeyServerInfo: f.p.impl}
	return rr.MarshalJSON()
}

func (f fastForwarder) Logger() *slog.Logger { return f.p.logger }

// The fast path forwards a complete tools/call from a downstream stdio
// session to a stdio upstream as JSON-RPC bytes, below the SDK: the
// downstream line is picked out of the stream before the SDK decodes it,
// its params go upstream as received (only _meta's io.modelcontextprotocol/*
// keys are removed, in place) under a proxy-owned ID, the upstream's
// response is picked out of the child's output the same way, and goes back
// under the client's ID, encoded as the SDK encodes responses. The SDK's
// JSON decoding (a fresh 32 KiB buffer per value, several values per
// message) was most of the proxy's cost per call; the result is the one the
// SDK path gives (which also passes the upstream's raw result on).
//
// Only calls the SDK path would forward untouched take it: the session has
// completed its initialize handshake on a protocol before 2026-07-28 (or
// server/discover, for a request that carries the 2026-07-28 protocol in
// its _meta), the tool is in the cached listing, the params hold only
// name, arguments and _meta, the arguments are a JSON object with every
// required field present, and _meta carries no progress token. Everything
// else (and everything while the upstream is down or not on stdio) goes
// through the SDK, unchanged.

// wrapFast returns t with the fast path for complete tool calls when t is
// an *mcp.IOTransport (stdio, or any newline-delimited stream with one
// peer); any other transport is returned as it is. calls, if set, counts
// the calls forwarded on the fast path.
func wrapFast(t mcp.Transport, f rawForwarder, calls *atomic.Int64) mcp.Transport {
	iot, ok := t.(*mcp.IOTransport)
	if !ok {
		return t
	}
	if calls == nil {
		calls = new(atomic.Int64)
	}
	return &fastTransport{io: iot, f: f, calls: calls}
}

type fastTransport struct {
	io    *mcp.IOTransport
	f     rawForwarder
	calls *atomic.Int64
}

func (t *fastTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	s := &fastSession{f: t.f, calls: t.calls, w: newLineWriter(t.io.Writer, nil)}
	c, err := (&mcp.IOTransport{
		Reader:        newLineReader(t.io.Reader, t.io.MaxLineLength, s.take, nil),
		Writer:        s.w,
		MaxLineLength: t.io.MaxLineLength,
	}).Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &fastConn{Connection: c, s: s}, nil
}

// fastSession is the state of one downstream stream.
type fastSession struct {
	f     rawForwarder
	calls *atomic.Int64
	w     *lineWriter // the downstream's output, shared with the SDK

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

// fastConn is the SDK's connection over the filtered stream; it watches
// the SDK's answers to the handshake.
type fastConn struct {
	mcp.Connection
	s *fastSession
}

func (c *fastConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if err != nil {
		c.s.abandonAll()
	}
	return msg, err
}

func (c *fastConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if resp, ok := msg.(*jsonrpc.Response); ok {
		s := c.s
		s.mu.Lock()
		if s.discoverID != nil && *s.discoverID == resp.ID {
			s.discoverID = nil
			s.discovered = s.discovered || resp.Error == nil
		}
		if s.initID != nil && *s.initID == resp.ID {
			s.initID = nil
			var res struct {
				ProtocolVersion string `json:"protocolVersion"`
			}
			if resp.Error == nil && json.Unmarshal(resp.Result, &res) == nil {
				s.protocol = res.ProtocolVersion
			}
		}
		s.mu.Unlock()
	}
	return c.Connection.Write(ctx, msg)
}

func (c *fastConn) Close() error {
	c.s.abandonAll()
	return c.Connection.Close()
}

// take looks at each line the client sends before the SDK does, and
// consumes the tool calls it forwards itself, and the batches it refuses.
func (s *fastSession) take(line []byte) bool {
	if isBatch(line) {
		return s.refuseBatch()
	}
	m, ok := readEnvelope(line)
	if !ok {
		return false // not JSON-RPC: the SDK's business
	}
	if m.method == "tools/call" {
		return m.isCall && m.v2 && s.tryFast(m.id, m.params)
	}
	s.watch(m)
	return false
}

// envelope is what the fast path reads of a JSON-RPC message.
type envelope struct {
	method string
	id     jsonrpc.ID
	isCall bool // it has an id: a request, not a notification
	v2     bool // "jsonrpc": "2.0"
	params json.RawMessage
}

// readEnvelope reads a message's envelope, or reports false for a line
// that is not a JSON-RPC request or notification the fast path can read.
func readEnvelope(line []byte) (envelope, bool) {
	obj, err := plan.ParseObject(line)
	if err != nil {
		return envelope{}, false
	}
	var m envelope
	var rawMethod, rawID json.RawMessage
	for _, mem := range obj.Members {
		switch mem.Key {
		case "jsonrpc":
			m.v2 = string(mem.Value) == `"2.0"`
		case "id":
			rawID = mem.Value
		case "method":
			rawMethod = mem.Value
		case "params":
			m.params = mem.Value
		}
	}
	var ok bool
	if m.method, ok = rawString(rawMethod); !ok {
		return envelope{}, false
	}
	if len(rawID) > 0 && string(rawID) != "null" {
		var v any
		if json.Unmarshal(rawID, &v) != nil {
			return envelope{}, false
		}
		if m.id, err = jsonrpc.MakeID(v); err != nil {
			return envelope{}, false
		}
		m.isCall = true
	}
	return m, true
}

// watch follows the session's handshake and cancellations (the SDK
// handles the message too).
func (s *fastSession) watch(m envelope) {
	switch {
	case m.method == "notifications/cancelled" && !m.isCall:
		s.cancelled(m.params)
		return
	case m.method == "initialize" && m.isCall:
		s.mu.Lock()
		s.initID, s.protocol, s.initialized = &m.id, "", false
		s.mu.Unlock()
	case m.method == "server/discover" && m.isCall:
		s.mu.Lock()
		s.discoverID = &m.id
		s.mu.Unlock()
	case m.method == "notifications/initialized" && !m.isCall:
		s.mu.Lock()
		s.initialized = s.protocol != ""
		s.mu.Unlock()
	}
}

// protocolNoBatches is the first protocol version without JSON-RPC
// batching (removed in 2025-06-18).
const protocolNoBatches = "2025-06-18"

func isBatch(line []byte) bool {
	line = bytes.TrimLeft(line, " \t\r\n")
	return len(line) > 0 && line[0] == '['
}

// refuseBatch answers a JSON-RPC batch on a session whose protocol has no
// batching, as the streamable HTTP transport refuses one: with a sentence
// naming the versions (here as an Invalid Request error with a null id,
// JSON-RPC's answer to a message it cannot take). A batch before the
// handshake, or on 2025-03-26, is left to the SDK.
func (s *fastSession) refuseBatch() bool {
	s.mu.Lock()
	version := s.protocol
	if version == "" && s.discovered {
		version = protocolPerRequest
	}
	s.mu.Unlock()
	if version < protocolNoBatches {
		return false
	}
	// The SDK's encoder omits a zero ID; JSON-RPC wants "id": null.
	b, err := json.Marshal(struct {
		JSONRPC string         `json:"jsonrpc"`
		ID      any            `json:"id"`
		Error   *jsonrpc.Error `json:"error"`
	}{"2.0", nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest,
		Message: fmt.Sprintf("JSON-RPC batching is not supported in %s and later (session version: %s)", protocolNoBatches, version)}})
	if err == nil {
		_, err = s.w.Write(append(b, '\n'))
	}
	if err != nil {
		s.f.Logger().Debug("refusing a JSON-RPC batch: writing the error failed", "err", err)
	}
	return true
}

// tryFast forwards a tool call on the fast path and reports whether it did.
func (s *fastSession) tryFast(id jsonrpc.ID, raw json.RawMessage) bool {
	params, perRequest, ok := s.params(raw)
	if !ok {
		return false
	}
	s.mu.Lock()
	if perRequest {
		// A 2026-07-28 request carries its protocol in _meta; the SDK
		// takes the session's state from server/discover (or initialize).
		ok = s.discovered || s.initialized
	} else {
		ok = s.initialized && s.protocol != "" && s.protocol < protocolPerRequest
	}
	_, dup := s.pending[id]
	ok = ok && !dup && !s.closed
	fc := &fastCall{id: id}
	if ok {
		if s.pending == nil {
			s.pending = map[jsonrpc.ID]*fastCall{}
		}
		s.pending[id] = fc
	}
	s.mu.Unlock()
	if !ok {
		return false
	}
	s.calls.Add(1) // before the answer can arrive
	cancel, err := s.f.RawCall("tools/call", params, func(resp *jsonrpc.Response, err error) {
		if !s.finish(fc) {
			return
		}
		out := &jsonrpc.Response{ID: fc.id}
		switch {
		case err != nil:
			out.Error = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "upstream MCP server: " + err.Error()}
		case resp.Error != nil:
			out.Error = resp.Error
		default:
			b, rerr := s.f.Result(resp.Result, perRequest)
			if rerr != nil {
				out.Error = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: rerr.Error()}
			} else {
				out.Result = b
			}
		}
		if werr := writeMessage(s.w, out); werr != nil {
			s.f.Logger().Debug("writing a forwarded tool result failed", "err", werr)
		}
	})
	if err != nil {
		// The upstream is down or not on stdio: the SDK path answers.
		s.calls.Add(-1)
		s.finish(fc)
		return false
	}
	s.mu.Lock()
	fc.cancel = cancel
	gone := s.pending[fc.id] != fc
	s.mu.Unlock()
	if gone {
		// Answered already (then cancel does nothing), or abandoned by a
		// closing session meanwhile.
		cancel(context.Canceled.Error())
	}
	return true
}

// finish removes fc from the calls in flight and reports whether it was
// still there (the call had neither been answered nor cancelled).
func (s *fastSession) finish(fc *fastCall) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pending[fc.id] != fc {
		return false
	}
	delete(s.pending, fc.id)
	return true
}

// cancelled handles the client's notifications/cancelled for a fast call
// as the SDK path does: the upstream call is cancelled and the client gets
// the error response the SDK writes for a cancelled request. The
// notification is passed to the SDK as well, which ignores an ID it does
// not know.
func (s *fastSession) cancelled(raw json.RawMessage) {
	var params struct {
		RequestID any `json:"requestId"`
	}
	if json.Unmarshal(raw, &params) != nil {
		return
	}
	id, err := jsonrpc.MakeID(params.RequestID) // as the SDK reads it
	if err != nil {
		return
	}
	s.mu.Lock()
	fc := s.pending[id]
	var cancel func(string)
	if fc != nil {
		delete(s.pending, id)
		cancel = fc.cancel
	}
	s.mu.Unlock()
	if fc == nil {
		return
	}
	if cancel != nil {
		cancel(context.Canceled.Error())
	}
	_ = writeMessage(s.w, &jsonrpc.Response{ID: fc.id, Error: context.Canceled})
}

// abandonAll cancels every fast call in flight upstream when the client
// has gone, as the SDK path cancels its handlers.
func (s *fastSession) abandonAll() {
	s.mu.Lock()
	s.closed = true
	var cancels []func(string)
	for _, fc := range s.pending {
		if fc.cancel != nil {
			cancels = append(cancels, fc.cancel)
		}
	}
	s.pending = nil
	s.mu.Unlock()
	for _, cancel := range cancels {
		cancel(context.Canceled.Error())
	}
}

// params returns the params to send upstream for a tools/call the proxy
// forwards untouched, and whether the request follows the 2026-07-28
// per-request protocol (its _meta names the protocol), or false if the call
// must take the SDK path.
func (s *fastSession) params(raw json.RawMessage) (params []byte, perRequest, ok bool) {
	obj, name, args, meta, ok := callMembers(raw)
	if !ok || name == "" || len(args) == 0 || !s.f.Untouched(name, args) {
		return nil, false, false
	}
	if meta == nil {
		return raw, false, true
	}
	metaObj, err := plan.ParseObject(meta)
	if err != nil {
		return nil, false, false
	}
	if _, ok := metaObj.Get("progressToken"); ok {
		return nil, false, false
	}
	if perRequest, ok = perRequestProtocol(metaObj); !ok {
		return nil, false, false
	}
	if params, ok = withUpstreamMeta(raw, obj, metaObj); !ok {
		return nil, false, false
	}
	return params, perRequest, true
}

// callMembers splits a tools/call's params into the members the fast path
// takes; any other member (inputResponses, requestState, or anything the
// SDK path would drop) sends the call to the SDK path (ok false).
func callMembers(raw json.RawMessage) (obj *plan.Object, name string, args, meta json.RawMessage, ok bool) {
	obj, err := plan.ParseObject(raw)
	if err != nil {
		return nil, "", nil, nil, false
	}
	for _, m := range obj.Members {
		switch m.Key {
		case "name":
			if json.Unmarshal(m.Value, &name) != nil {
				return nil, "", nil, nil, false
			}
		case "arguments":
			args = m.Value
		case "_meta":
			meta = m.Value
		default:
			return nil, "", nil, nil, false
		}
	}
	return obj, name, args, meta, true
}

// withUpstreamMeta returns the params with only the _meta keys the
// upstream is sent (raw itself when that is all of them).
func withUpstreamMeta(raw json.RawMessage, obj, meta *plan.Object) ([]byte, bool) {
	kept := &plan.Object{}
	for _, m := range meta.Members {
		if plan.UpstreamMetaKey(m.Key) {
			kept.Members = append(kept.Members, m)
		}
	}
	if len(kept.Members) == len(meta.Members) && len(kept.Members) > 0 {
		return raw, true
	}
	if len(kept.Members) == 0 {
		obj.Delete("_meta")
	} else {
		b, err := kept.MarshalJSON()
		if err != nil {
			return nil, false
		}
		obj.Set("_meta", b)
	}
	b, err := obj.MarshalJSON()
	return b, err == nil
}

// perRequestProtocol reports whether a request's _meta selects the
// 2026-07-28 protocol, as the SDK decides it, and whether the fast path
// may take the request: a later version, or per-request client
// information the SDK would refuse, goes through the SDK.
func perRequestProtocol(meta *plan.Object) (perRequest, ok bool) {
	v, present := meta.Get(mcp.MetaKeyProtocolVersion)
	var version string
	if !present || json.Unmarshal(v, &version) != nil || version < protocolPerRequest {
		return false, true
	}
	if version != protocolPerRequest {
		return false, false
	}
	caps, present := meta.Get(mcp.MetaKeyClientCapabilities)
	info, hasInfo := meta.Get(mcp.MetaKeyClientInfo)
	// A client sends the same capabilities and identity with every
	// request: remember the last ones found valid.
	key := string(caps) + "\x00" + string(info)
	if hasInfo {
		key += "\x00"
	}
	if last := lastValidMeta.Load(); present && last != nil && *last == key {
		return true, true
	}
	var c struct {
		mcp.ClientCapabilities
		Roots *struct {
			ListChanged bool `json:"listChanged,omitempty"`
		} `json:"roots,omitempty"`
	}
	if !present || !isObject(caps) || json.Unmarshal(caps, &c) != nil {
		return false, false
	}
	if hasInfo {
		var impl mcp.Implementation
		if !isObject(info) || json.Unmarshal(info, &impl) != nil {
			return false, false
		}
	}
	lastValidMeta.Store(&key)
	return true, true
}

// lastValidMeta holds the last per-request capabilities and client
// information perRequestProtocol accepted.
var lastValidMeta atomic.Pointer[string]

func isObject(v json.RawMessage) bool {
	v = bytes.TrimSpace(v)
	return len(v) > 0 && v[0] == '{'
}

// rawString decodes a JSON string value.
func rawString(v json.RawMessage) (string, bool) {
	if len(v) >= 2 && v[0] == '"' && bytes.IndexByte(v, '\\') < 0 {
		return string(v[1 : len(v)-1]), true
	}
	var s string
	return s, json.Unmarshal(v, &s) == nil
}
