package proxy

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// fakeForwarder is a fake proxy: it forwards tools named "fast*" untouched and
// answers each raw call, once the test releases it, with a fixed result.
type fakeForwarder struct {
	mu        sync.Mutex
	params    []string
	cancelled []string
	release   chan struct{} // nil answers at once
	fail      bool
	// called, if set, receives each call sent upstream.
	called chan struct{}
}

func (f *fakeForwarder) Untouched(name string, _ json.RawMessage) bool {
	return strings.HasPrefix(name, "fast")
}

func (f *fakeForwarder) RawCall(_ string, params []byte, done func(*jsonrpc.Response, error)) (func(string), error) {
	if f.fail {
		return nil, errors.New("upstream down")
	}
	f.mu.Lock()
	f.params = append(f.params, string(params))
	n := len(f.params)
	f.mu.Unlock()
	if f.called != nil {
		f.called <- struct{}{}
	}
	go func() {
		if f.release != nil {
			<-f.release
		}
		done(&jsonrpc.Response{Result: json.RawMessage(`{"content":[{"type":"text","text":"raw"}],"n":1.50}`)}, nil)
	}()
	return func(reason string) {
		f.mu.Lock()
		f.cancelled = append(f.cancelled, reason)
		f.mu.Unlock()
		_ = n
	}, nil
}

func (f *fakeForwarder) Result(raw json.RawMessage, perRequest bool) (json.RawMessage, error) {
	return raw, nil
}

func (f *fakeForwarder) Logger() *slog.Logger { return slog.New(slog.DiscardHandler) }

func (f *fakeForwarder) sent() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.params...)
}

// peer is a raw newline-delimited client of a server behind the fast path.
type peer struct {
	t *testing.T
	w io.Writer
	r *bufio.Reader
}

func (p *peer) send(line string) {
	p.t.Helper()
	if _, err := p.w.Write([]byte(line + "\n")); err != nil {
		p.t.Fatal(err)
	}
}

// response reads lines until the response with the raw id.
func (p *peer) response(id string) string {
	p.t.Helper()
	for {
		line, err := p.r.ReadString('\n')
		if err != nil {
			p.t.Fatalf("reading the response %s: %v", id, err)
		}
		var m struct {
			ID json.RawMessage `json:"id"`
		}
		if json.Unmarshal([]byte(line), &m) == nil && string(m.ID) == id {
			return strings.TrimSpace(line)
		}
	}
}

func start(t *testing.T, f *fakeForwarder) (*peer, *atomic.Int64) {
	t.Helper()
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	calls := new(atomic.Int64)
	srv := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	ss, err := srv.Connect(ctx, wrapFast(&mcp.IOTransport{Reader: sr, Writer: sw}, f, calls), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); cw.Close(); ss.Close() })
	return &peer{t: t, w: cw, r: bufio.NewReader(cr)}, calls
}

func (p *peer) initialize() {
	p.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	p.response("0")
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// TestTakes checks which tools/call lines the fast path takes, what it
// sends upstream for them and what the client gets back.
func TestTakes(t *testing.T) {
	t.Parallel()
	f := &fakeForwarder{}
	p, calls := start(t, f)

	p.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"fast","arguments":{}}}`)
	p.response("1") // the SDK's answer: not initialized yet
	if calls.Load() != 0 {
		t.Fatal("a call before initialize took the fast path")
	}
	p.initialize()

	p.send(`{"jsonrpc":"2.0","id":"abc","method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/clientInfo":{"name":"x"},"app/z":1,"app/a":2},"name":"fast","arguments":{"b":1,"a":[1.50]}}}`)
	if got, want := p.response(`"abc"`), `{"jsonrpc":"2.0","id":"abc","result":{"content":[{"type":"text","text":"raw"}],"n":1.50}}`; got != want {
		t.Errorf("response\n got %s\nwant %s", got, want)
	}
	if got, want := f.sent(), []string{`{"_meta":{"app/z":1,"app/a":2},"name":"fast","arguments":{"b":1,"a":[1.50]}}`}; strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("sent upstream\n got %q\nwant %q", got, want)
	}

	for i, params := range []string{
		`{"name":"slow","arguments":{}}`,                               // not forwarded untouched
		`{"name":"fast","arguments":{},"task":{"ttl":1}}`,              // a key the fast path does not know
		`{"name":"fast","arguments":{},"_meta":{"progressToken":"p"}}`, // progress goes through the SDK
		`{"name":"fast"}`, // no arguments
		`{"name":"fast","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01"}}`, // a later protocol
	} {
		before := calls.Load()
		id := string(rune('a' + i))
		p.send(`{"jsonrpc":"2.0","id":"` + id + `","method":"tools/call","params":` + params + `}`)
		p.response(`"` + id + `"`)
		if calls.Load() != before {
			t.Errorf("%s took the fast path", params)
		}
	}
	if calls.Load() != 1 {
		t.Errorf("%d fast calls, want 1", calls.Load())
	}
}

// TestCancelAndFallback checks a cancelled fast call (cancelled upstream,
// answered as the SDK answers) and a call the upstream cannot take (left to
// the SDK).
func TestCancelAndFallback(t *testing.T) {
	t.Parallel()
	f := &fakeForwarder{release: make(chan struct{}), called: make(chan struct{}, 1)}
	p, calls := start(t, f)
	p.initialize()
	p.send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"fast","arguments":{}}}`)
	select {
	case <-f.called:
	case <-time.After(10 * time.Second):
		t.Fatal("the call was not sent upstream")
	}
	p.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`)
	if got := p.response("7"); !strings.Contains(got, `"error"`) {
		t.Errorf("cancelled call answered %s", got)
	}
	close(f.release) // the upstream's late answer is dropped
	f.mu.Lock()
	if len(f.cancelled) != 1 {
		t.Errorf("cancelled upstream %d times", len(f.cancelled))
	}
	f.mu.Unlock()

	f.fail = true
	before := calls.Load()
	p.send(`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"fast","arguments":{}}}`)
	p.response("8")
	if calls.Load() != before {
		t.Error("a call the upstream refused was counted as fast")
	}
}
