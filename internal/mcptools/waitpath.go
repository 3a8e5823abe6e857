package mcptools

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"io"
	"iter"
	"net/http"
	"sync"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/jsonobj"
	"github.com/mcp-elicitation/elicitation/internal/reqbody"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The waiting path of an elicit_await (#24.1). A waiting call
// used to hold, for its whole wait, everything a request in flight holds:
// the SDK's per-request transport and session, two of its goroutines, the
// tool handler's goroutine and the decoded request. Here the call runs
// through the SDK as every call does (every check of the SDK, then
// elicit_await's own: its arguments, the host form and the push, the wait
// caps, all decided in await, tools.go), up to the point where it would
// wait. There the handler hands the wait over (deferWait) and answers the
// SDK with a placeholder result; the SDK writes its response, which
// ServeHTTP keeps back (captureWriter), and returns, releasing its
// per-request machinery. ServeHTTP then starts the wait
// (Service.AwaitFunc, the non-blocking form of the Service.Await the
// handler would have made, so the same rules, under the HTTP request's own
// context: its deadline and its end), which holds no goroutine while it
// waits (a store watch, a timer at its bound, an AfterFunc on its
// context), and writes the SDK's response with the placeholder replaced by
// the real result, encoded as the SDK encodes results (its envelope and
// the fields it adds stay its own bytes). What a waiting call holds is
// then net/http's connection (its goroutine waiting for the answer, until
// parked) and the store's wake-up; parked, one goroutine reading the
// connection and the wake-up.
//
// It applies to a POST of the sessionless era whose standard headers name
// a tools/call of elicit_await (the SDK refuses one whose body says
// otherwise) and whose body is one request, not a batch; and to a POST of
// an open session (the session eras) whose body is one tools/call of
// elicit_await. There the SDK's response is an event stream: its priming
// event is held back with the rest (it goes out with the answer), the
// session counts the call as in flight until the wait ends (sessions.go,
// heldUntilAnswered), and the event store, which kept the placeholder,
// refuses to replay it (placeholderEvents). Every other request and the
// calls the Tasks methods make through the tool (tasks/result) are served
// as before. A handed-over wait ends at its bound, at the connection's
// end (parked or not), or at a notifications/cancelled naming its call,
// which the SDK, done with the call, can no longer deliver
// (cancelHandedOver).

// The states of a deferrable request's wait (captureWriter.state).
const (
	deferOpen   = iota // the handler may still hand its wait over
	deferTaken         // handed over: wait and release are set
	deferClosed        // too late: ServeHTTP is done, the handler waits itself
)

// inflightRequest is what the in-flight reference of an HTTP request
// names: the request, and its deferral where its wait may be handed over.
type inflightRequest struct {
	r  *http.Request
	cw *captureWriter // nil: its wait is never handed over
}

// placeholderText is the text of the placeholder result for the request
// whose in-flight reference is ref: a random key of this process (no
// client can write it) and the reference.
func (s *Server) placeholderText(ref string) string {
	s.placeholderOnce.Do(func() { s.placeholderKey = "elicitation-deferred-wait-" + rand.Text() + "-" })
	return s.placeholderKey + ref
}

// deferrable reports whether r's elicit_await may hand its wait over, and
// leaves r's body as it was (what it read is read again). maxBody is the
// body limit the SDK enforces; a longer body is left to the SDK. For a
// session's POST it also returns the message's call key (sessionMessage).
func deferrable(r *http.Request, maxBody int64) (bool, sessionMsg) {
	if r.Method != http.MethodPost || r.Body == nil {
		return false, sessionMsg{}
	}
	if !Sessionless(r) {
		if r.Header.Get("Mcp-Session-Id") == "" {
			return false, sessionMsg{}
		}
		m := sessionMessage(r, maxBody)
		return m.await, m
	}
	if r.Header.Get("Mcp-Method") != "tools/call" || r.Header.Get("Mcp-Name") != ToolAwait {
		return false, sessionMsg{}
	}
	// One request, not a batch: the body's first byte past white space.
	var head []byte
	b := make([]byte, 1)
	one := false
	for len(head) < 64 {
		n, err := r.Body.Read(b)
		head = append(head, b[:n]...)
		if n == 1 && !bytes.ContainsRune([]byte(" \t\r\n"), rune(b[0])) {
			one = b[0] == '{'
			break
		}
		if err != nil {
			break
		}
	}
	reqbody.Prepend(r, head)
	return one, sessionMsg{}
}

// sessionMsg is what the waiting path needs of a session's POST: whether
// it is one tools/call of elicit_await (the session eras have no standard
// headers that name it), and the key of the call it is
// (notifications/cancelled: the call it cancels), made of the session,
// the principal (Principal) and the JSON-RPC id. Whether the message is
// one the SDK accepts, the SDK decides as for every message; this only
// lets a wait be handed over, and canceled once it was.
//
// It also tells whether the message is one tools/call of a tool that
// cannot wait (canWait): its stream's priming event then goes out with
// its answer, in one write to the connection (primingWriter).
type sessionMsg struct {
	await       bool
	atOnce      bool   // a call of a tool answered at once
	call        string // elicit_await's key
	cancelsCall string // the key of the call a notifications/cancelled names
}

// atOnceNames are the quoted names of the tools that cannot wait
// (canWait decides which): a body without one of them is no call of one
// (sessionMessage's first filter).
var atOnceNames = func() [][]byte {
	var names [][]byte
	for _, n := range ToolNames {
		if !canWait(n) {
			names = append(names, []byte(`"`+n+`"`))
		}
	}
	return names
}()

// mayName reports whether body may be a message that sessionMessage
// tells something of: it names elicit_await, a tool answered at once, or
// notifications/cancelled.
func mayName(body []byte) bool {
	if bytes.Contains(body, []byte(`"`+ToolAwait+`"`)) || bytes.Contains(body, []byte(`"notifications/cancelled"`)) {
		return true
	}
	for _, n := range atOnceNames {
		if bytes.Contains(body, n) {
			return true
		}
	}
	return false
}

func sessionMessage(r *http.Request, maxBody int64) sessionMsg {
	body, ok := reqbody.Peek(r, maxBody)
	if !ok {
		return sessionMsg{}
	}
	if !mayName(body) {
		return sessionMsg{}
	}
	msg, ok := readHead(body)
	if !ok {
		return sessionMsg{}
	}
	key := func(id json.RawMessage) string {
		var b bytes.Buffer
		if len(id) == 0 || json.Compact(&b, id) != nil {
			return ""
		}
		return r.Header.Get("Mcp-Session-Id") + "\x00" + Principal(r) + "\x00" + b.String()
	}
	switch msg.method {
	case "tools/call":
		if msg.name == ToolAwait {
			return sessionMsg{await: true, call: key(msg.id)}
		}
		return sessionMsg{atOnce: len(msg.id) > 0 && !canWait(msg.name)}
	case "notifications/cancelled":
		return sessionMsg{cancelsCall: key(msg.requestID)}
	}
	return sessionMsg{}
}

// rpcHead is what sessionMessage reads of a JSON-RPC message: its id, its
// method, and of its params the tool's name and the id a cancellation
// names.
type rpcHead struct {
	id, requestID json.RawMessage
	method, name  string
}

// readHead reads body's head as encoding/json decodes it into a struct of
// those fields (jsonHead), and reports whether body is such a message.
// Most messages are read by scanHead, which gives the same answer
// (FuzzScanHeadIsEncodingJSON) without encoding/json's decode of the whole
// message, for a message the SDK decodes again (that decode was 5% of a
// session server's CPU on status calls, docs/benchmarks.md).
func readHead(body []byte) (rpcHead, bool) {
	var h rpcHead
	if scanHead(body, &h) {
		return h, true
	}
	return jsonHead(body)
}

func jsonHead(body []byte) (rpcHead, bool) {
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Name      string          `json:"name"`
			RequestID json.RawMessage `json:"requestId"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &msg) != nil {
		return rpcHead{}, false
	}
	return rpcHead{id: msg.ID, requestID: msg.Params.RequestID, method: msg.Method, name: msg.Params.Name}, true
}

// scanHead reads body's head into h where jsonobj reads it and the
// answer is sure to be encoding/json's: every value of a field is a
// string without escapes, an object or null where encoding/json wants
// one, and no other key matches a field's name but for case (which
// encoding/json would take for the field). It reports false otherwise.
func scanHead(body []byte, h *rpcHead) bool {
	return scanFields(body, []string{"id", "method", "params"}, func(name string, v []byte) bool {
		switch name {
		case "id":
			h.id = v
			return true
		case "method":
			return scanString(&h.method, v)
		}
		return string(v) == "null" || scanFields(v, []string{"name", "requestId"}, func(name string, v []byte) bool {
			if name == "requestId" {
				h.requestID = v
				return true
			}
			return scanString(&h.name, v)
		})
	})
}

// scanFields reads the object b's members named by fields, each with
// field (which reports whether it read the value), and reports whether
// b is an object jsonobj reads, every field's value was read, and no
// other key is a field's name but for case.
func scanFields(b []byte, fields []string, field func(name string, v []byte) bool) bool {
	ok := true
	read := jsonobj.Members(b, func(k, v []byte) {
		if !ok {
			return
		}
		for _, f := range fields {
			if string(k) == f {
				ok = field(f, v)
				return
			}
		}
		ok = !foldsTo(k, fields...)
	})
	return read && ok
}

// scanString sets *s to the string v, leaves it for null (as
// encoding/json does), and reports false for anything else.
func scanString(s *string, v []byte) bool {
	if string(v) == "null" {
		return true
	}
	c, ok := jsonobj.String(v)
	if ok {
		*s = string(c)
	}
	return ok
}

// foldsTo reports whether k is one of names but for case.
func foldsTo(k []byte, names ...string) bool {
	for _, n := range names {
		if bytes.EqualFold(k, []byte(n)) {
			return true
		}
	}
	return false
}

// cancelRef is the cancel of a handed-over session call's wait
// (Server.sessionCalls).
type cancelRef struct{ cancel context.CancelFunc }

// cancelHandedOver ends the handed-over wait of the call key names, if
// one waits: a notifications/cancelled the SDK can no longer deliver to
// the handler, which returned when it handed its wait over.
func (s *Server) cancelHandedOver(key string) {
	if v, ok := s.sessionCalls.Load(key); ok && key != "" {
		v.(*cancelRef).cancel()
	}
}

// deferWait hands wait over to the ServeHTTP of the HTTP request that
// carried req, if that request may (deferrable), nothing took it yet and
// nothing of its response was written, and returns the placeholder result
// to answer the SDK with; otherwise it returns nil and the caller waits
// itself.
func (s *Server) deferWait(req *mcp.CallToolRequest, wait func(context.Context, func(*mcp.CallToolResult)), release func()) *mcp.CallToolResult {
	ref, in := s.inflightOf(req)
	if in == nil || in.cw == nil {
		return nil
	}
	c := in.cw
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state != deferOpen || c.decided {
		return nil
	}
	c.state, c.wait, c.release = deferTaken, wait, release
	s.handedOver.Add(1)
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s.placeholderText(ref)}}}
}

// finishDeferred completes the request whose wait was handed over: it
// starts the wait (no goroutine of its own: its result comes on the
// goroutine that ended it), waits for its answer, then writes the SDK's
// response with the result in place of the placeholder. When the SDK's response did not carry the placeholder (the
// client went away first, the SDK answered otherwise), it writes what the
// SDK wrote and does not wait.
//
// A wait still under way after parkAfter is parked: the connection is
// taken from net/http (Hijack), which frees its buffers, its request and
// its goroutines, and the answer is written on it when the wait ends, with
// Connection: close (the client's next request opens a new connection);
// one goroutine reads the connection meanwhile, so that a client that goes
// away ends the wait, as net/http's would; it is the only goroutine of a
// parked wait.
func (s *Server) finishDeferred(r *http.Request, ref string, c *captureWriter) {
	c.mu.Lock()
	state, wait, slot, after := c.state, c.wait, c.release, c.after
	c.state, c.wait, c.after = deferClosed, nil, nil
	c.mu.Unlock()
	// The slot and what waited for the wait's end (heldUntilAnswered,
	// all of it registered by now), without keeping c, which keeps
	// net/http's connection and its buffers, once parked.
	release := func() {
		slot()
		for _, f := range after {
			f()
		}
	}
	if state != deferTaken {
		c.passHeld() // not handed over: the SDK's response went out as it was
		return
	}
	// The placeholder's and the result's own fields, without their braces:
	// the SDK writes a result's fields as encoding/json does and adds its
	// own around them (_meta.serverInfo before, resultType after), which
	// stay its bytes.
	ph := fields(&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s.placeholderText(ref)}}})
	i := bytes.Index(c.body, ph)
	if !c.captured || ph == nil || i < 0 {
		release()
		c.passHeld()
		c.flush(c.body)
		return
	}
	a := &answer{ready: make(chan struct{}), before: c.body[:i], after: c.body[i+len(ph):]}
	ctx, cancel := waitContext(r)
	stop := context.AfterFunc(r.Context(), cancel)
	call, cref := c.call, &cancelRef{cancel}
	if call != "" {
		s.sessionCalls.Store(call, cref)
	}
	// The wait holds no goroutine of its own (Service.AwaitFunc): its
	// result comes on the goroutine of whatever ended it, a store's wake,
	// the bound's timer, ctx's end, or this one if it ends at once.
	wait(ctx, func(result *mcp.CallToolResult) {
		res := fields(result)
		if call != "" {
			s.sessionCalls.CompareAndDelete(call, cref)
		}
		// The slot is given back before the answer goes out, as the
		// handler gives it back before the SDK writes.
		release()
		cancel()
		if res == nil {
			s.log.Error("elicit_await: the result could not be encoded")
			res = fields(&mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "internal: the result could not be encoded"}}})
		}
		a.set(res)
	})
	t := time.NewTimer(s.parkAfter)
	defer t.Stop()
	select {
	case <-a.ready:
	case <-t.C:
		if stop() && s.park(c, a, cancel) {
			return
		}
		context.AfterFunc(r.Context(), cancel) // not parked: wait here
		<-a.ready
	}
	stop()
	c.flush(a.body())
}

// waitContext is the context of a handed-over wait: r's deadline (on
// Lambda, the invocation's end, which the wait bound keeps clear of), and
// its own end, which r's end or, once parked, the connection's triggers.
func waitContext(r *http.Request) (context.Context, context.CancelFunc) {
	if dl, ok := r.Context().Deadline(); ok {
		return context.WithDeadline(context.Background(), dl)
	}
	return context.WithCancel(context.Background())
}

// answer is a handed-over wait's response: the SDK's bytes around the
// result, and the result once the wait ends.
type answer struct {
	before, after []byte
	ready         chan struct{} // closed once res is set

	mu     sync.Mutex
	res    []byte
	parked func([]byte) // set once parked: writes the response
}

// set records the result and writes it where the request is parked.
func (a *answer) set(res []byte) {
	a.mu.Lock()
	a.res = res
	write := a.parked
	close(a.ready)
	a.mu.Unlock()
	if write != nil {
		write(a.body())
	}
}

// body is the response body with the result.
func (a *answer) body() []byte {
	out := make([]byte, 0, len(a.before)+len(a.res)+len(a.after))
	return append(append(append(out, a.before...), a.res...), a.after...)
}

// parkedWriteTimeout bounds writing a parked request's answer.
const parkedWriteTimeout = 10 * time.Second

// park takes the connection of c's request from net/http for the rest of
// a's wait (finishDeferred) and reports whether it did; it does not when
// the answer is already there or the connection cannot be taken (HTTP/2,
// a Lambda adapter).
func (s *Server) park(c *captureWriter, a *answer, cancel context.CancelFunc) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.res != nil {
		return false
	}
	conn, _, err := http.NewResponseController(c.ResponseWriter).Hijack()
	if err != nil {
		return false
	}
	// What net/http had set (the read deadline of a body, the write
	// timeout) no longer applies: the wait bound ends the wait.
	_ = conn.SetDeadline(time.Time{})
	header := c.Header().Clone()
	header.Del("Connection") // the SDK's keep-alive of an event stream; this answer closes
	code := c.code
	a.parked = func(body []byte) {
		defer conn.Close()
		header.Set("Date", time.Now().UTC().Format(http.TimeFormat))
		res := &http.Response{StatusCode: code, ProtoMajor: 1, ProtoMinor: 1, Header: header, Close: true,
			ContentLength: int64(len(body)), Body: io.NopCloser(bytes.NewReader(body))}
		var out bytes.Buffer
		if res.Write(&out) == nil {
			_ = conn.SetWriteDeadline(time.Now().Add(parkedWriteTimeout))
			_, _ = conn.Write(out.Bytes())
		}
	}
	s.parked.Add(1)
	go func() {
		// The client's end: a read that fails (the client closed, or the
		// answer was written and the connection closed) ends the wait.
		// Bytes a client sends before its answer are dropped; it gets
		// Connection: close.
		b := make([]byte, 1)
		for {
			if _, err := conn.Read(b); err != nil {
				cancel()
				return
			}
		}
	}()
	return true
}

// fields is res encoded without its braces, nil if it cannot be (or has
// its own _meta, which the SDK's would meet).
func fields(res *mcp.CallToolResult) []byte {
	if res.Meta != nil {
		return nil
	}
	b, err := json.Marshal(res)
	if err != nil || len(b) < 2 || b[0] != '{' || b[len(b)-1] != '}' {
		return nil
	}
	return b[1 : len(b)-1]
}

// captureWriter keeps back the SDK's response once the request's wait was
// handed over (it is the placeholder's), and passes it through otherwise.
// An event stream's priming event, written before the call runs, is held
// back until that is known.
type captureWriter struct {
	http.ResponseWriter

	mu       sync.Mutex
	state    int
	wait     func(context.Context, func(*mcp.CallToolResult)) // starts the wait; calls back once with its result
	release  func()
	decided  bool // whether captured was decided (at the first write but a priming event)
	captured bool
	code     int
	body     []byte
	held     []byte   // a priming event, before captured is decided
	flushed  bool     // the SDK flushed a captured response: so is the answer
	after    []func() // run once the handed-over wait ends (heldUntilAnswered)
	call     string   // a session's call: its key (sessionMsg)
}

// primeEvent starts the SDK's priming event of an event stream.
var primeEvent = []byte("event: prime\n")

func (c *captureWriter) capturing() bool {
	if !c.decided {
		c.decided = true
		c.captured = c.state == deferTaken
		if c.captured {
			c.body = append(c.body, c.held...)
		} else if c.held != nil {
			_, _ = c.ResponseWriter.Write(c.held)
		}
		c.held = nil
	}
	return c.captured
}

func (c *captureWriter) WriteHeader(code int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.capturing() {
		if c.code == 0 {
			c.code = code
		}
		return
	}
	c.ResponseWriter.WriteHeader(code)
}

func (c *captureWriter) Write(b []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.decided && c.held == nil && c.state == deferOpen && bytes.HasPrefix(b, primeEvent) {
		c.held = bytes.Clone(b)
		return len(b), nil
	}
	if c.capturing() {
		if c.code == 0 {
			c.code = http.StatusOK
		}
		c.body = append(c.body, b...)
		return len(b), nil
	}
	return c.ResponseWriter.Write(b)
}

// Flush flushes a response passed through; a captured one (or a held
// priming event) goes out whole at the end.
func (c *captureWriter) Flush() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.decided && c.held != nil {
		return
	}
	if c.capturing() {
		c.flushed = true
		return
	}
	if f, ok := c.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (c *captureWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }

// primingWriter serves a call answered at once (sessionMsg.atOnce): the
// SDK flushes a stream's priming event as soon as it writes it, so that a
// client that loses a waiting call's connection can resume; a call that
// does not wait gets nothing from that flush but a second write to the
// connection, so its priming event goes out with its answer. Whatever
// else is written and flushed passes through.
type primingWriter struct {
	http.ResponseWriter
	wrote, held bool
}

func (p *primingWriter) Write(b []byte) (int, error) {
	p.held = !p.wrote && bytes.HasPrefix(b, primeEvent)
	p.wrote = true
	return p.ResponseWriter.Write(b)
}

// Flush flushes but for the one flush right after the priming event.
func (p *primingWriter) Flush() {
	if p.held {
		p.held = false
		return
	}
	if f, ok := p.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (p *primingWriter) Unwrap() http.ResponseWriter { return p.ResponseWriter }

// passHeld writes a priming event still held back, where nothing else
// was written after it (the SDK ended the stream there).
func (c *captureWriter) passHeld() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.decided && c.held != nil {
		c.capturing()
	}
}

// flush writes a captured response with body.
func (c *captureWriter) flush(body []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.captured {
		return
	}
	c.ResponseWriter.WriteHeader(c.code)
	_, _ = c.ResponseWriter.Write(body)
	if f, ok := c.ResponseWriter.(http.Flusher); ok && c.flushed {
		f.Flush() // as the SDK did: an event stream stays chunked
	}
}

// handOverKey carries a deferrable request's captureWriter in its
// context, for heldUntilAnswered.
type handOverKey struct{}

// heldUntilAnswered runs f once the wait of r's elicit_await ends where
// the wait was handed over (the SDK is done with r, the call is not), and
// reports whether it will; otherwise it does nothing and reports false.
// The session cap counts a session's POST in flight until then.
func heldUntilAnswered(r *http.Request, f func()) bool {
	c, _ := r.Context().Value(handOverKey{}).(*captureWriter)
	if c == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state != deferTaken {
		return false
	}
	c.after = append(c.after, f)
	return true
}

// placeholderEvents is the sessions' event store: it refuses to replay a
// stream whose stored response is a handed-over wait's placeholder (the
// answer went out on the connection, never through the SDK), as a store
// refuses a stream whose events it dropped (the SDK answers 400).
type placeholderEvents struct {
	mcp.EventStore
	s *Server
}

var errPlaceholderEvent = errors.New("the stream's response was answered below the SDK and is not kept")

func (e placeholderEvents) After(ctx context.Context, sessionID, streamID string, index int) iter.Seq2[[]byte, error] {
	key := []byte(e.s.placeholderText(""))
	return func(yield func([]byte, error) bool) {
		for data, err := range e.EventStore.After(ctx, sessionID, streamID, index) {
			if err == nil && bytes.Contains(data, key) {
				yield(nil, errPlaceholderEvent)
				return
			}
			if !yield(data, err) || err != nil {
				return
			}
		}
	}
}
