// Package reqbody lets the handlers in front of the MCP SDK look into a
// POST's body and leave it whole for the next one: the body is read into
// memory once, up to a limit, and every later look, and the SDK's own
// read, get the same bytes without reading or copying them again.
package reqbody

import (
	"bytes"
	"io"
	"net/http"
)

// Body is a request body held in memory by Peek.
type Body struct {
	r    bytes.Reader
	b    []byte
	orig io.Closer
}

func (b *Body) Read(p []byte) (int, error) { return b.r.Read(p) }

// Close closes the body the request came with.
func (b *Body) Close() error { return b.orig.Close() }

// Peek returns r's body, read into memory if an earlier Peek did not, and
// true; r.Body then reads the same bytes from their start. When the body
// is longer than max bytes or its read failed, Peek returns false and
// leaves r.Body to read as it came (what was read, then the rest), for the
// SDK to refuse with its own limit.
func Peek(r *http.Request, max int64) ([]byte, bool) {
	if b, ok := r.Body.(*Body); ok && b.r.Len() == len(b.b) {
		return b.b, true
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, max+1))
	if err != nil || int64(len(body)) > max {
		Prepend(r, body)
		return nil, false
	}
	Replace(r, body)
	return body, true
}

// Replace makes r's body read body instead of what is left of its own,
// keeping the original's Close, and sets ContentLength to match (a
// rewritten message).
func Replace(r *http.Request, body []byte) {
	b := &Body{b: body, orig: closerOf(r.Body)}
	b.r.Reset(body)
	r.Body = b
	r.ContentLength = int64(len(body))
}

// Prepend makes r's body read head (bytes already read from it), then the
// rest, keeping the original's Close.
func Prepend(r *http.Request, head []byte) {
	r.Body = prepended{io.MultiReader(bytes.NewReader(head), r.Body), closerOf(r.Body)}
}

// closerOf is what closes body: the request's own body, however many
// times it was wrapped here.
func closerOf(body io.ReadCloser) io.Closer {
	switch b := body.(type) {
	case *Body:
		return b.orig
	case prepended:
		return b.orig
	}
	return body
}

type prepended struct {
	io.Reader
	orig io.Closer
}

func (b prepended) Close() error { return b.orig.Close() }
