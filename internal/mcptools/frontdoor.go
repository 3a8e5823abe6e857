package mcptools

import (
	"bytes"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"sync"

	"github.com/mcp-elicitation/elicitation/internal/jsonobj"
	"github.com/mcp-elicitation/elicitation/internal/mcptasks"
)

// The front door: the only code between net/http and the SDK. It reads a
// request's era once (Sessionless), stamps the reference a tool handler
// finds its HTTP request by (requestRefHeader), reads the body once where
// anything here looks into it (readBody: the SDK's own read then gets it
// from memory), mends what the SDK drops of the Tasks (mcptasks.Lift),
// wraps the ResponseWriter once (edgeWriter) and routes the request to the
// SDK's stateless handler or its sessions.

// ServeHTTP serves MCP over streamable HTTP.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	sessionless := Sessionless(r)
	ref := s.newRef()
	r2 := r.WithContext(r.Context())
	r2.Header = maps.Clone(r.Header)
	if r2.Header == nil {
		r2.Header = http.Header{}
	}
	r2.Header.Set(requestRefHeader, ref)
	// What the Tasks mend (mcptasks.Lift) and carry (mcptasks.Uncarry):
	// every session-era request, and a 2026-07-28 subscriptions/listen.
	tasks := !sessionless || r.Header.Get("Mcp-Method") == "subscriptions/listen"
	ew := &edgeWriter{ResponseWriter: w, uncarry: tasks}
	if r.Method == http.MethodPost && r.Body != nil && tasks {
		body, ok := readBody(r2, s.maxBody)
		if ok {
			lifted, refusal := mcptasks.Lift(sessionless, body)
			if refusal != nil {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write(refusal)
				return
			}
			if lifted != nil {
				setBody(r2, lifted, r.Body)
			}
			ew.primeWithAnswer = !sessionless && r.Header.Get("Mcp-Session-Id") != "" && answeredAtOnce(body)
		}
	}
	if r.Method == http.MethodPost && r.Body != nil && sessionless && mcptasks.NamedByTask(r.Header.Get("Mcp-Method")) {
		// The Tasks' routing header is checked here, where a mismatch can
		// be answered HTTP 400 like the SDK's own header mismatches.
		if body, ok := readBody(r2, s.maxBody); ok {
			if refusal := mcptasks.RefuseName(r.Header.Get("Mcp-Name"), body); refusal != nil {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusBadRequest)
				_, _ = w.Write(refusal)
				return
			}
		}
	}
	s.inflight.Store(ref, r)
	defer s.inflight.Delete(ref)
	if sessionless {
		s.stateless.ServeHTTP(ew, r2)
		return
	}
	s.sessionEras.ServeHTTP(ew, r2)
}

// readBody reads r's body into memory, up to max bytes, and leaves r.Body
// to read the same bytes (the SDK's read); ok is false when the body is
// longer or its read failed, and r.Body then reads what came as it came
// (what was read, then the rest), for the SDK to refuse with its own limit.
func readBody(r *http.Request, max int64) (body []byte, ok bool) {
	orig := r.Body
	body, err := io.ReadAll(io.LimitReader(orig, max+1))
	if err != nil || int64(len(body)) > max {
		r.Body = readCloser{io.MultiReader(bytes.NewReader(body), orig), orig}
		return nil, false
	}
	setBody(r, body, orig)
	return body, true
}

// setBody makes r's body read body, closed by closing orig (the request's
// own), with its ContentLength.
func setBody(r *http.Request, body []byte, orig io.Closer) {
	r.Body = readCloser{bytes.NewReader(body), orig}
	r.ContentLength = int64(len(body))
}

type readCloser struct {
	io.Reader
	io.Closer
}

// atOnceNames are the quoted names of the tools that cannot wait
// (canWait decides which): a body without one of them is no call of one
// (answeredAtOnce's first filter).
var atOnceNames = func() [][]byte {
	var names [][]byte
	for _, n := range ToolNames {
		if !canWait(n) {
			names = append(names, []byte(`"`+n+`"`))
		}
	}
	return names
}()

// answeredAtOnce reports whether body, a POST of an open session, is one
// tools/call of a tool that cannot wait (canWait): its stream's priming
// event then goes out with its answer (edgeWriter). The SDK flushes a
// 2025-11-25 stream's priming event at once, so that a client that loses
// a waiting call's connection can resume it (Last-Event-ID); a call that
// cannot wait gets nothing from that flush but a second write to the
// connection.
func answeredAtOnce(body []byte) bool {
	if !mayName(body) {
		return false
	}
	msg, ok := readHead(body)
	return ok && msg.method == "tools/call" && len(msg.id) > 0 && !canWait(msg.name)
}

// mayName reports whether body may be a call of a tool answered at once
// (answeredAtOnce's first filter).
func mayName(body []byte) bool {
	for _, n := range atOnceNames {
		if bytes.Contains(body, n) {
			return true
		}
	}
	return false
}

// rpcHead is what answeredAtOnce reads of a JSON-RPC message: its id, its
// method, and of its params the tool's name.
type rpcHead struct {
	id           json.RawMessage
	method, name string
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
			Name string `json:"name"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &msg) != nil {
		return rpcHead{}, false
	}
	return rpcHead{id: msg.ID, method: msg.Method, name: msg.Params.Name}, true
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
		return string(v) == "null" || scanFields(v, []string{"name"}, func(_ string, v []byte) bool {
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

// primeEvent starts the SDK's priming event of an event stream.
var primeEvent = []byte("event: prime\n")

// edgeWriter is the one ResponseWriter wrapper of the front door. Where
// uncarry (a session-era response, a 2026-07-28 listen), it turns the
// carriers of task notifications back into what they carry
// (mcptasks.Uncarry; one event is one Write, in the SDK as in the event
// store's replays). Where primeWithAnswer (answeredAtOnce), it skips the
// one flush right after the priming event. Where opening is set (the
// session cap's initialize), it runs it once when the response starts (by
// then the SDK has set Mcp-Session-Id) or when the handler returns
// without one (open). Whatever else is written and flushed passes
// through.
type edgeWriter struct {
	http.ResponseWriter
	uncarry, primeWithAnswer bool
	wrote, held              bool
	opening                  func()
	once                     sync.Once
}

// open runs opening, once.
func (e *edgeWriter) open() {
	if e.opening != nil {
		e.once.Do(e.opening)
	}
}

func (e *edgeWriter) WriteHeader(code int) {
	e.open()
	e.ResponseWriter.WriteHeader(code)
}

func (e *edgeWriter) Write(b []byte) (int, error) {
	e.open()
	if e.primeWithAnswer {
		e.held = !e.wrote && bytes.HasPrefix(b, primeEvent)
		e.wrote = true
	}
	if e.uncarry {
		if out, ok := mcptasks.Uncarry(b); ok {
			if _, err := e.ResponseWriter.Write(out); err != nil {
				return 0, err
			}
			return len(b), nil
		}
	}
	return e.ResponseWriter.Write(b)
}

// Flush flushes but for the one flush right after a held priming event.
func (e *edgeWriter) Flush() {
	if e.held {
		e.held = false
		return
	}
	_ = http.NewResponseController(e.ResponseWriter).Flush()
}

func (e *edgeWriter) Unwrap() http.ResponseWriter { return e.ResponseWriter }
