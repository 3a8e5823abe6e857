package proxy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/proxy"
)

// lineTap records every line the proxy writes to a downstream stream.
type lineTap struct {
	w     io.WriteCloser
	mu    sync.Mutex
	buf   bytes.Buffer
	lines [][]byte
}

func (t *lineTap) Write(p []byte) (int, error) {
	t.mu.Lock()
	t.buf.Write(p)
	for {
		i := bytes.IndexByte(t.buf.Bytes(), '\n')
		if i < 0 {
			break
		}
		t.lines = append(t.lines, append([]byte(nil), t.buf.Next(i+1)...))
	}
	t.mu.Unlock()
	return t.w.Write(p)
}

func (t *lineTap) Close() error { return t.w.Close() }

// responses returns the response lines by their raw ID.
func (t *lineTap) responses() map[string]string {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := map[string]string{}
	for _, l := range t.lines {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(l, &m) == nil && m.Method == "" && len(m.ID) > 0 {
			out[string(m.ID)] = string(l)
		}
	}
	return out
}

// TestFastPathMatchesSDKPath sends the same calls from the same go-sdk
// client through the stdio fast path and through the SDK path (the same
// proxy, its transport not wrapped) and compares the response bytes the
// client receives, for a stateful and a 2026-07-28 client. The fast path
// must be used for the complete calls and be indistinguishable on the wire.
func TestFastPathMatchesSDKPath(t *testing.T) {
	t.Parallel()
	p := startStdioProxy(t)
	calls := []struct {
		name string
		args any
		meta mcp.Meta
		fast bool // the fast path takes it
	}{
		{"mirror", json.RawMessage(`{"message":"hi","n":1.50,"z":{"b":1,"a":2},"e":"\u00e9<&>"}`), nil, true},
		{"mirror", json.RawMessage(`{"message":"with meta"}`), mcp.Meta{"app/trace": "t1", "z": 1}, true},
		{"static", map[string]any{}, nil, true},
		{"big", map[string]any{}, nil, true},
		{"fails", map[string]any{}, nil, true},
		{"mirror", map[string]any{"message": "  "}, nil, false},        // needs a form: planned as such
		{"mirror", json.RawMessage(`["not", "an object"]`), nil, true}, // forwarded: the upstream judges it
		{"no-such-tool", map[string]any{}, nil, false},
	}
	wantFast := int64(0)
	for _, c := range calls {
		if c.fast {
			wantFast++
		}
	}
	run := func(t *testing.T, protocol string, fast bool) map[string]string {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cr, sw := io.Pipe()
		sr, cw := io.Pipe()
		tap := &lineTap{w: sw}
		var st mcp.Transport = &mcp.IOTransport{Reader: sr, Writer: tap}
		if fast {
			st = p.WrapTransport(st)
		}
		ss, err := p.Server().Connect(ctx, st, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer ss.Close()
		client := mcp.NewClient(&mcp.Implementation{Name: "differential", Version: "1"}, nil)
		cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: cr, Writer: cw}, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		if got := cs.InitializeResult().ProtocolVersion; got != protocol {
			t.Fatalf("negotiated %s, want %s", got, protocol)
		}
		before := proxy.FastCalls(p)
		for _, c := range calls {
			cs.CallTool(ctx, &mcp.CallToolParams{Name: c.name, Arguments: c.args, Meta: c.meta}) // errors are compared as bytes
		}
		want := int64(0)
		if fast {
			want = wantFast
		}
		if got := proxy.FastCalls(p) - before; got != want {
			t.Errorf("fast=%v: %d calls took the fast path, want %d", fast, got, want)
		}
		return tap.responses()
	}
	for _, protocol := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(protocol, func(t *testing.T) {
			viaFast := run(t, protocol, true)
			viaSDK := run(t, protocol, false)
			if len(viaFast) != len(viaSDK) || len(viaFast) < len(calls) {
				t.Fatalf("%d responses on the fast path, %d on the SDK path, for %d calls", len(viaFast), len(viaSDK), len(calls))
			}
			for id, want := range viaSDK {
				if got := viaFast[id]; got != want {
					t.Errorf("response %s differs\nfast path: %.400s\n SDK path: %.400s", id, got, want)
				}
			}
		})
	}
}
