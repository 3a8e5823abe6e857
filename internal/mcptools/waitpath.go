package mcptools

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The waiting path of a sessionless elicit_await (#24.1). A waiting call
// used to hold, for its whole wait, everything a request in flight holds:
// the SDK's per-request transport and session, two of its goroutines, the
// tool handler's goroutine and the decoded request. Here the call runs
// through the SDK as every call does (every check of the SDK, then
// elicit_await's own: its arguments, the host form and the push, the wait
// caps, all decided in await, tools.go), up to the point where it would
// wait. There the handler hands the wait over (deferWait) and answers the
// SDK with a placeholder result; the SDK writes its response, which
// ServeHTTP keeps back (captureWriter), and returns, releasing its
// per-request machinery. ServeHTTP then waits (Service.Await, the same
// call the handler would have made, under the HTTP request's own context:
// its deadline and its end) on the connection's goroutine, and writes the
// SDK's response with the placeholder replaced by the real result, encoded
// as the SDK encodes results (its envelope and the fields it adds stay its
// own bytes). What a waiting call holds is then net/http's connection and
// the store's wake-up.
//
// It applies only to a POST of the sessionless era whose standard headers
// name a tools/call of elicit_await (the SDK refuses one whose body says
// otherwise) and whose body is one request, not a batch; every other
// request, the session eras and the calls the Tasks methods make through
// the tool (tasks/result) are served as before.

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
// leaves r's body as it was (only its first bytes are looked at).
func deferrable(r *http.Request) bool {
	if r.Method != http.MethodPost || !Sessionless(r) || r.Body == nil ||
		r.Header.Get("Mcp-Method") != "tools/call" || r.Header.Get("Mcp-Name") != ToolAwait {
		return false
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
	r.Body = rebody{io.MultiReader(bytes.NewReader(head), r.Body), r.Body}
	return one
}

// rebody reads what was already read, then the rest, and closes the
// original body.
type rebody struct {
	io.Reader
	orig io.Closer
}

func (b rebody) Close() error { return b.orig.Close() }

// deferWait hands wait over to the ServeHTTP of the HTTP request that
// carried req, if that request may (deferrable), nothing took it yet and
// nothing of its response was written, and returns the placeholder result
// to answer the SDK with; otherwise it returns nil and the caller waits
// itself.
func (s *Server) deferWait(req *mcp.CallToolRequest, wait func(context.Context) *mcp.CallToolResult, release func()) *mcp.CallToolResult {
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
// waits, then writes the SDK's response with the result in place of the
// placeholder. When the SDK's response did not carry the placeholder (the
// client went away first, the SDK answered otherwise), it writes what the
// SDK wrote and does not wait.
//
// A wait still under way after parkAfter is parked: the connection is
// taken from net/http (Hijack), which frees its buffers, its request and
// its goroutines, and the answer is written on it when the wait ends, with
// Connection: close (the client's next request opens a new connection);
// one goroutine reads the connection meanwhile, so that a client that goes
// away ends the wait, as net/http's would.
func (s *Server) finishDeferred(r *http.Request, ref string, c *captureWriter) {
	c.mu.Lock()
	state, wait, release := c.state, c.wait, c.release
	c.state, c.wait = deferClosed, nil
	c.mu.Unlock()
	if state != deferTaken {
		return // not handed over: the SDK's response went out as it was
	}
	// The placeholder's and the result's own fields, without their braces:
	// the SDK writes a result's fields as encoding/json does and adds its
	// own around them (_meta.serverInfo before, resultType after), which
	// stay its bytes.
	ph := fields(&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s.placeholderText(ref)}}})
	i := bytes.Index(c.body, ph)
	if !c.captured || ph == nil || i < 0 {
		release()
		c.flush(c.body)
		return
	}
	a := &answer{ready: make(chan struct{}), before: c.body[:i], after: c.body[i+len(ph):]}
	ctx, cancel := waitContext(r)
	stop := context.AfterFunc(r.Context(), cancel)
	go func() {
		res := fields(wait(ctx))
		// The slot is given back before the answer goes out, as the
		// handler gives it back before the SDK writes.
		release()
		cancel()
		if res == nil {
			s.log.Error("elicit_await: the result could not be encoded")
			res = fields(&mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "internal: the result could not be encoded"}}})
		}
		a.set(res)
	}()
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
type captureWriter struct {
	http.ResponseWriter

	mu       sync.Mutex
	state    int
	wait     func(context.Context) *mcp.CallToolResult
	release  func()
	decided  bool // whether captured was decided (at the first write)
	captured bool
	code     int
	body     []byte
}

func (c *captureWriter) capturing() bool {
	if !c.decided {
		c.decided = true
		c.captured = c.state == deferTaken
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
	if c.capturing() {
		if c.code == 0 {
			c.code = http.StatusOK
		}
		c.body = append(c.body, b...)
		return len(b), nil
	}
	return c.ResponseWriter.Write(b)
}

// Flush flushes a response passed through; a captured one goes out whole
// at the end.
func (c *captureWriter) Flush() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.capturing() {
		return
	}
	if f, ok := c.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (c *captureWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }

// flush writes a captured response with body.
func (c *captureWriter) flush(body []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.captured {
		return
	}
	c.ResponseWriter.WriteHeader(c.code)
	_, _ = c.ResponseWriter.Write(body)
}
