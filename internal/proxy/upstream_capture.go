package proxy

//lint:file-ignore SA1019 sampling and roots are deprecated as of 2026-07-28 (SEP-2577) but in their deprecation window; the proxy attributes their requests to the call they serve.

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A rawSink receives the raw result of the upstream request sent with its
// context: the exact bytes the upstream wrote, which the SDK's typed results
// cannot reproduce (key order, number spelling, fields it does not model).
type rawSink struct {
	mu  sync.Mutex
	raw json.RawMessage
}

// Result returns the raw result captured, or nil if none was.
func (s *rawSink) Result() json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.raw
}

// Set keeps a copy of raw as the result; a nil sink keeps nothing.
func (s *rawSink) Set(raw json.RawMessage) {
	if s == nil {
		return
	}
	s.mu.Lock()
	s.raw = append(json.RawMessage(nil), raw...)
	s.mu.Unlock()
}

type sinkKey struct{}

// withSink returns a context whose upstream request's raw result is captured
// in the returned sink. When one call sends several requests (a retry), the
// last response wins.
func withSink(ctx context.Context) (context.Context, *rawSink) {
	s := &rawSink{}
	return context.WithValue(ctx, sinkKey{}, s), s
}

func sinkFrom(ctx context.Context) *rawSink {
	s, _ := ctx.Value(sinkKey{}).(*rawSink)
	return s
}

// registry maps request IDs, as JSON text, to the sinks awaiting them.
type registry struct {
	mu    sync.Mutex
	sinks map[string]*rawSink
}

func (r *registry) add(id string, s *rawSink) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sinks == nil {
		r.sinks = map[string]*rawSink{}
	}
	r.sinks[id] = s
}

func (r *registry) deliver(id string, result json.RawMessage) {
	r.mu.Lock()
	s := r.sinks[id]
	delete(r.sinks, id)
	r.mu.Unlock()
	if s != nil && result != nil {
		s.Set(result)
	}
}

func idKey(id jsonrpc.ID) string {
	b, _ := json.Marshal(id.Raw())
	return string(b)
}

// captureConn captures raw results on a message-level connection (stdio).
type captureConn struct {
	mcp.Connection
	reg      registry
	progress *progressTracker
}

type captureTransport struct {
	mcp.Transport
	progress *progressTracker
}

func (t captureTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &captureConn{Connection: c, progress: t.progress}, nil
}

func (c *captureConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
		if s := sinkFrom(ctx); s != nil {
			c.reg.add(idKey(req.ID), s)
		}
	}
	return c.Connection.Write(ctx, msg)
}

func (c *captureConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if err != nil {
		return msg, err
	}
	switch m := msg.(type) {
	case *jsonrpc.Response:
		c.reg.deliver(idKey(m.ID), m.Result)
	case *jsonrpc.Request:
		if m.Method == "notifications/progress" && c.progress != nil {
			c.progress.sawParams(m.Params)
		}
	}
	return msg, err
}

// captureRoundTripper captures raw results on the streamable HTTP transport,
// below the SDK's connection (whose unexported hooks a wrapper would hide).
// It reads the JSON-RPC id from each POST body sent with a sink, and parses
// the response body, JSON or server-sent events, as the SDK reads it.
type captureRoundTripper struct {
	base     http.RoundTripper
	reg      registry
	progress *progressTracker
	callers  *callers
}

func (t *captureRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	s := sinkFrom(req.Context())
	if s == nil || req.Method != http.MethodPost || req.Body == nil {
		return t.base.RoundTrip(req)
	}
	body, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return nil, err
	}
	req = req.Clone(req.Context())
	req.Body = io.NopCloser(bytes.NewReader(body))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	var head struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(body, &head) == nil && len(head.ID) > 0 {
		t.reg.add(compact(head.ID), s)
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	ct := resp.Header.Get("Content-Type")
	switch {
	case strings.HasPrefix(ct, "application/json"):
		resp.Body = &jsonBodyTee{ReadCloser: resp.Body, reg: &t.reg, progress: t.progress}
	case strings.HasPrefix(ct, "text/event-stream"):
		resp.Body = &sseBodyTee{ReadCloser: resp.Body, reg: &t.reg, progress: t.progress,
			caller: callerFrom(req.Context()), callers: t.callers}
	}
	return resp, nil
}

// compact is raw without insignificant white space, or raw itself when it
// is not JSON.
func compact(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

// deliverMessages hands the result of every response in data (one message
// or a batch) to its sink; an upstream request that is the whole of data is
// caller's (callers.saw), when callers is set.
func deliverMessages(reg *registry, progress *progressTracker, data []byte, caller any, callers *callers) {
	data = bytes.TrimSpace(data)
	var msgs []json.RawMessage
	batch := len(data) > 0 && data[0] == '['
	if batch {
		if json.Unmarshal(data, &msgs) != nil {
			return
		}
	} else {
		msgs = []json.RawMessage{data}
	}
	for _, m := range msgs {
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
			Result json.RawMessage `json:"result"`
		}
		if json.Unmarshal(m, &msg) != nil {
			continue
		}
		switch {
		case msg.Method == "notifications/progress" && progress != nil:
			progress.sawParams(msg.Params)
		case msg.Method == "" && len(msg.ID) > 0 && msg.Result != nil:
			reg.deliver(compact(msg.ID), msg.Result)
		case msg.Method != "" && len(msg.ID) > 0 && !batch && caller != nil && callers != nil:
			callers.saw(msg.Method, msg.Params, caller)
		}
	}
}

type jsonBodyTee struct {
	io.ReadCloser
	reg      *registry
	progress *progressTracker
	buf      bytes.Buffer
	done     bool
}

func (b *jsonBodyTee) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.buf.Write(p[:n])
	if err == io.EOF && !b.done {
		b.done = true
		deliverMessages(b.reg, b.progress, b.buf.Bytes(), nil, nil)
	}
	return n, err
}

type sseBodyTee struct {
	io.ReadCloser
	reg      *registry
	progress *progressTracker
	// caller is who sent the POST whose stream this is; the upstream's
	// requests on it belong to that caller's call.
	caller  any
	callers *callers
	pending []byte // bytes of the current, unfinished line
	data    bytes.Buffer
}

func (b *sseBodyTee) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.feed(p[:n])
	return n, err
}

// feed parses complete lines; an empty line ends an event.
func (b *sseBodyTee) feed(chunk []byte) {
	b.pending = append(b.pending, chunk...)
	for {
		i := bytes.IndexByte(b.pending, '\n')
		if i < 0 {
			return
		}
		line := strings.TrimSuffix(string(b.pending[:i]), "\r")
		b.pending = b.pending[i+1:]
		if line == "" {
			if b.data.Len() > 0 {
				deliverMessages(b.reg, b.progress, b.data.Bytes(), b.caller, b.callers)
				b.data.Reset()
			}
			continue
		}
		if v, ok := strings.CutPrefix(line, "data:"); ok {
			if b.data.Len() > 0 {
				b.data.WriteByte('\n')
			}
			b.data.WriteString(strings.TrimPrefix(v, " "))
		}
	}
}

type callerKey struct{}

// withCaller marks ctx's upstream request as made for caller (the proxy's
// downstream session): the upstream's requests that arrive on that
// request's HTTP response stream, which belong to it, are attributed to
// caller (see upstreamConn.CallerOf).
func withCaller(ctx context.Context, caller any) context.Context {
	return context.WithValue(ctx, callerKey{}, caller)
}

func callerFrom(ctx context.Context) any { return ctx.Value(callerKey{}) }

// callers remembers which caller each upstream request seen on a call's
// response stream belongs to, keyed by its method and params as the SDK
// decodes them (the SDK's handlers do not see request IDs).
type callers struct {
	mu   sync.Mutex
	seen map[string][]any
	n    int
}

// maxCallers bounds the requests remembered (each is forgotten when its
// handler asks for it).
const maxCallers = 1000

// saw records that the upstream request method with params was sent on
// caller's response stream.
func (c *callers) saw(method string, params json.RawMessage, caller any) {
	key, ok := requestKey(method, params)
	if !ok {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen == nil || c.n >= maxCallers {
		c.seen, c.n = map[string][]any{}, 0
	}
	c.seen[key] = append(c.seen[key], caller)
	c.n++
}

// requestKey is a request's method and params as the SDK's typed params
// re-encode them.
func requestKey(method string, raw json.RawMessage) (string, bool) {
	var p any
	switch method {
	case "sampling/createMessage":
		p = new(mcp.CreateMessageParams)
	case "elicitation/create":
		p = new(mcp.ElicitParams)
	case "roots/list":
		p = new(mcp.ListRootsParams)
	default:
		return "", false
	}
	if len(raw) > 0 && json.Unmarshal(raw, p) != nil {
		return "", false
	}
	return keyOf(method, p)
}

func keyOf(method string, params any) (string, bool) {
	b, err := json.Marshal(params)
	if err != nil {
		return "", false
	}
	return method + "\x00" + string(b), true
}

// CallerOf returns the caller (see withCaller) whose call an upstream
// request with these typed params arrived for, when the upstream is on
// HTTP and sent it on that call's response stream; false otherwise.
func (c *upstreamConn) CallerOf(method string, params any) (any, bool) {
	if c.callers == nil {
		return nil, false
	}
	key, ok := keyOf(method, params)
	if !ok {
		return nil, false
	}
	c.callers.mu.Lock()
	defer c.callers.mu.Unlock()
	list := c.callers.seen[key]
	if len(list) == 0 {
		return nil, false
	}
	caller := list[0]
	if len(list) == 1 {
		delete(c.callers.seen, key)
	} else {
		c.callers.seen[key] = list[1:]
	}
	c.callers.n--
	return caller, true
}
