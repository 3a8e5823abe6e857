package reqbody_test

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/mcp-elicitation/elicitation/internal/reqbody"
)

// body is a request body that counts its reads and its closes.
type body struct {
	io.Reader
	reads, closes int
	fail          error
}

func (b *body) Read(p []byte) (int, error) {
	b.reads++
	if b.fail != nil {
		return 0, b.fail
	}
	return b.Reader.Read(p)
}

func (b *body) Close() error { b.closes++; return nil }

func request(b *body) *http.Request {
	r, _ := http.NewRequest(http.MethodPost, "http://example.test/mcp", nil)
	r.Body = b
	return r
}

func rest(t *testing.T, r *http.Request) string {
	t.Helper()
	got, err := io.ReadAll(r.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(got)
}

func TestPeek(t *testing.T) {
	t.Parallel()
	const msg = `{"jsonrpc":"2.0","id":1,"method":"tools/call"}`
	for _, c := range []struct {
		name string
		max  int64
		fail error
		ok   bool
		left string // what r.Body reads after the peeks
	}{
		{"fits", 100, nil, true, msg},
		{"exactly the limit", int64(len(msg)), nil, true, msg},
		{"one byte over", int64(len(msg)) - 1, nil, false, msg},
		{"read fails", 100, errors.New("connection reset"), false, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := &body{Reader: strings.NewReader(msg), fail: c.fail}
			r := request(b)
			got, ok := reqbody.Peek(r, c.max)
			if ok != c.ok || ok && string(got) != msg || !ok && got != nil {
				t.Fatalf("first Peek: %q %v, want ok %v", got, ok, c.ok)
			}
			reads := b.reads
			again, ok := reqbody.Peek(r, c.max)
			if ok != c.ok || ok && string(again) != msg {
				t.Fatalf("second Peek: %q %v", again, ok)
			}
			if c.ok && b.reads != reads {
				t.Errorf("the second Peek read the body again (%d reads, then %d)", reads, b.reads)
			}
			if c.fail == nil {
				if left := rest(t, r); left != c.left {
					t.Errorf("the body reads %q after the peeks, want %q", left, c.left)
				}
			}
			if err := r.Body.Close(); err != nil || b.closes != 1 {
				t.Errorf("Close: %v, the original closed %d times", err, b.closes)
			}
		})
	}
}

// A body partly read after a Peek is not taken for whole by the next one.
func TestPeekAfterAPartialRead(t *testing.T) {
	t.Parallel()
	r := request(&body{Reader: strings.NewReader(`{"a":1}`)})
	if _, ok := reqbody.Peek(r, 100); !ok {
		t.Fatal("Peek refused a small body")
	}
	if _, err := io.ReadFull(r.Body, make([]byte, 3)); err != nil {
		t.Fatal(err)
	}
	got, ok := reqbody.Peek(r, 100)
	if !ok || string(got) != `":1}` {
		t.Errorf("Peek after 3 bytes were read: %q %v, want the rest", got, ok)
	}
}

func TestReplaceAndPrepend(t *testing.T) {
	t.Parallel()
	b := &body{Reader: strings.NewReader("tail")}
	r := request(b)
	reqbody.Prepend(r, []byte("head-"))
	if got, ok := reqbody.Peek(r, 100); !ok || string(got) != "head-tail" {
		t.Fatalf("Peek after Prepend: %q %v", got, ok)
	}
	reqbody.Replace(r, []byte("rewritten"))
	if r.ContentLength != int64(len("rewritten")) {
		t.Errorf("ContentLength %d after Replace", r.ContentLength)
	}
	if got, ok := reqbody.Peek(r, 100); !ok || string(got) != "rewritten" {
		t.Errorf("Peek after Replace: %q %v", got, ok)
	}
	if left := rest(t, r); left != "rewritten" {
		t.Errorf("body after Replace reads %q", left)
	}
	if err := r.Body.Close(); err != nil || b.closes != 1 {
		t.Errorf("Close: %v, the original closed %d times", err, b.closes)
	}
}
