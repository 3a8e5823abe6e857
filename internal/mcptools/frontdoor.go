package mcptools

import (
	"bytes"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"sync"

	"github.com/mcp-elicitation/elicitation/internal/eventstore"
)

// The front door: the only code between net/http and the SDK. It reads a
// request's era once (Sessionless), stamps the reference a tool handler
// finds its HTTP request by (requestRefHeader), reads the body once where
// anything here looks into it (readBody: the SDK's own read then gets it
// from memory), mends what the SDK drops of the Tasks (Lift),
// wraps the ResponseWriter once (edgeWriter) and routes the request to the
// SDK's stateless handler or its sessions.

// ServeHTTP serves MCP over streamable HTTP.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	sessionless := Sessionless(r)
	// The reference names one in-flight request. It needs to be unique, not
	// secret: this overwrites whatever a client sends in requestRefHeader.
	ref := strconv.FormatUint(s.refs.Add(1), 36)
	ctx := r.Context()
	if !sessionless {
		// The event store counts a session's streams against its principal.
		ctx = eventstore.WithPrincipal(ctx, Principal(r))
	}
	r2 := r.WithContext(ctx)
	r2.Header = maps.Clone(r.Header)
	if r2.Header == nil {
		r2.Header = http.Header{}
	}
	r2.Header.Set(requestRefHeader, ref)
	// What the Tasks mend (Lift) and carry (Uncarry):
	// every session-era request, and a 2026-07-28 subscriptions/listen.
	tasks := !sessionless || r.Header.Get("Mcp-Method") == "subscriptions/listen"
	ew := &edgeWriter{ResponseWriter: w, uncarry: tasks}
	// The Tasks' routing header is checked here too, where a mismatch can
	// be answered HTTP 400 like the SDK's own header mismatches.
	named := sessionless && NamedByTask(r.Header.Get("Mcp-Method"))
	if r.Method == http.MethodPost && r.Body != nil && (tasks || named) {
		body, ok := readBody(r2, s.maxBody)
		var lifted, refusal []byte
		status := http.StatusOK
		switch {
		case !ok:
		case named:
			refusal, status = RefuseName(r.Header.Get("Mcp-Name"), body), http.StatusBadRequest
		default:
			lifted, refusal = Lift(sessionless, body)
			ew.primeWithAnswer = !sessionless && r.Header.Get("Mcp-Session-Id") != "" && answeredAtOnce(body)
		}
		if refusal != nil {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			_, _ = w.Write(refusal)
			return
		}
		if lifted != nil {
			setBody(r2, lifted, r.Body)
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
	if !slices.ContainsFunc(atOnceNames, func(n []byte) bool { return bytes.Contains(body, n) }) {
		return false
	}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	return json.Unmarshal(body, &msg) == nil && msg.Method == "tools/call" && len(msg.ID) > 0 && !canWait(msg.Params.Name)
}

// primeEvent starts the SDK's priming event of an event stream.
var primeEvent = []byte("event: prime\n")

// edgeWriter is the one ResponseWriter wrapper of the front door. Where
// uncarry (a session-era response, a 2026-07-28 listen), it turns the
// carriers of task notifications back into what they carry
// (Uncarry; one event is one Write, in the SDK as in the event
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
		if out, ok := Uncarry(b); ok {
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
