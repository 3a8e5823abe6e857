package mcptools

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/mcp-elicitation/elicitation/internal/jsonobj"
	"github.com/mcp-elicitation/elicitation/internal/reqbody"
)

// The priming event of a session's call answered at once. The SDK opens
// every 2025-11-25 POST's event stream with a priming event and flushes it
// at once, so that a client that loses a waiting call's connection can
// resume it (Last-Event-ID); a call that cannot wait (canWait) gets
// nothing from that flush but a second write to the connection, so its
// priming event goes out with its answer (primingWriter).

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

// answeredAtOnce reports whether r, a POST of an open session, is one
// tools/call of a tool that cannot wait (canWait). It leaves r's body as
// it was (reqbody.Peek); maxBody is the body limit the SDK enforces.
func answeredAtOnce(r *http.Request, maxBody int64) bool {
	body, ok := reqbody.Peek(r, maxBody)
	if !ok || !mayName(body) {
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

// primingWriter serves a call answered at once (answeredAtOnce): the
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
