package proxy

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// chunked returns a reader that yields s in pieces of n bytes, so parsers
// see messages split across reads.
type chunked struct {
	s string
	n int
}

func (c *chunked) Read(p []byte) (int, error) {
	if c.s == "" {
		return 0, io.EOF
	}
	n := min(c.n, len(p), len(c.s))
	copy(p, c.s[:n])
	c.s = c.s[n:]
	return n, nil
}

func (c *chunked) Close() error { return nil }

func TestBodyTeesDeliverRawResults(t *testing.T) {
	t.Parallel()
	const result = `{"tools":[{"name":"x","inputSchema":{"z":1,"a":1.50}}]}`
	sse := "event: message\nid: 1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"tok\",\"progress\":1}}\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"id\":7,\n" + // one message over two data lines
		"data: \"result\":" + result + "}\r\n\r\n"
	for _, n := range []int{1, 3, 64, 4096} {
		for _, body := range []struct {
			name string
			wrap func(*registry, *progressTracker, io.ReadCloser) io.ReadCloser
			text string
		}{
			{"sse", func(r *registry, p *progressTracker, rc io.ReadCloser) io.ReadCloser {
				return &sseBodyTee{ReadCloser: rc, reg: r, progress: p}
			}, sse},
			{"json", func(r *registry, p *progressTracker, rc io.ReadCloser) io.ReadCloser {
				return &jsonBodyTee{ReadCloser: rc, reg: r, progress: p}
			}, `{"jsonrpc":"2.0","id":7,"result":` + result + `}`},
			{"json batch", func(r *registry, p *progressTracker, rc io.ReadCloser) io.ReadCloser {
				return &jsonBodyTee{ReadCloser: rc, reg: r, progress: p}
			}, `[{"jsonrpc":"2.0","id":6,"result":{}},{"jsonrpc":"2.0","id":7,"result":` + result + `}]`},
		} {
			reg := &registry{}
			sink := &rawSink{}
			reg.add("7", sink)
			progress := newProgressTracker()
			rc := body.wrap(reg, progress, &chunked{s: body.text, n: n})
			out, err := io.ReadAll(rc)
			if err != nil || string(out) != body.text {
				t.Fatalf("%s/%d: the tee changed the body: %q, %v", body.name, n, out, err)
			}
			if got := string(sink.Result()); got != result {
				t.Errorf("%s/%d: captured %q, want %q", body.name, n, got, result)
			}
			if body.name == "sse" && progress.received["tok"] != 1 {
				t.Errorf("%s/%d: progress notifications seen: %v", body.name, n, progress.received)
			}
		}
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestRoundTripperCapturesOnlyWithSink(t *testing.T) {
	t.Parallel()
	var sentBody string
	rt := &captureRoundTripper{base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		b, _ := io.ReadAll(r.Body)
		sentBody = string(b)
		return &http.Response{
			StatusCode: 200,
			Header:     http.Header{"Content-Type": {"application/json"}},
			Body:       io.NopCloser(strings.NewReader(`{"jsonrpc":"2.0","id":"a","result":{"k":2}}`)),
		}, nil
	})}
	req := `{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{}}`
	ctx, sink := withSink(context.Background())
	r, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://upstream/mcp", strings.NewReader(req))
	resp, err := rt.RoundTrip(r)
	if err != nil {
		t.Fatal(err)
	}
	io.ReadAll(resp.Body)
	if sentBody != req {
		t.Errorf("request body changed: %q", sentBody)
	}
	if got := string(sink.Result()); got != `{"k":2}` {
		t.Errorf("captured %q", got)
	}
	// Without a sink, nothing is wrapped.
	r2, _ := http.NewRequest(http.MethodPost, "http://upstream/mcp", strings.NewReader(req))
	resp, _ = rt.RoundTrip(r2)
	if _, wrapped := resp.Body.(*jsonBodyTee); wrapped {
		t.Error("body wrapped without a sink")
	}
	var v any
	if json.Unmarshal([]byte(req), &v) != nil {
		t.Fatal("bad fixture")
	}
}
