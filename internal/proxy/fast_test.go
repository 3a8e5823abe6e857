package proxy_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/proxy"
	"github.com/mcp-elicitation/elicitation/internal/proxy/plan"
)

// stdioUpstreamEnv makes the test binary a stdio MCP upstream for the fast
// path tests (see TestMain).
const stdioUpstreamEnv = "PROXY_TEST_STDIO_UPSTREAM"

func TestMain(m *testing.M) {
	if os.Getenv(stdioUpstreamEnv) == "1" {
		serveStdioUpstream()
		return
	}
	if path := os.Getenv(recordingUpstreamEnv); path != "" {
		_ = newRecordingServer(path).Run(context.Background(), &mcp.StdioTransport{})
		return
	}
	os.Exit(m.Run())
}

// serveStdioUpstream is an MCP server on stdio whose tools report what
// they received: "record" answers with its raw arguments, its _meta and
// how many calls it has had; "stats" reports the counters.
func serveStdioUpstream() {
	var records, started, cancelled atomic.Int64
	s := mcp.NewServer(&mcp.Implementation{Name: "stdio-upstream", Version: "1"}, nil)
	reply := func(v any) *mcp.CallToolResult {
		b, _ := json.Marshal(v)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}
	}
	s.AddTool(&mcp.Tool{Name: "record", InputSchema: json.RawMessage(`{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			n := records.Add(1)
			return reply(map[string]any{"calls": n, "args": string(req.Params.Arguments), "meta": req.Params.Meta}), nil
		})
	s.AddTool(&mcp.Tool{Name: "mirror", InputSchema: json.RawMessage(`{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			meta, _ := json.Marshal(req.Params.Meta)
			return &mcp.CallToolResult{
				Meta:              mcp.Meta{"upstream/saw-meta": string(meta)},
				Content:           []mcp.Content{&mcp.TextContent{Text: string(req.Params.Arguments)}},
				StructuredContent: req.Params.Arguments,
			}, nil
		})
	s.AddTool(&mcp.Tool{Name: "stats", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return reply(map[string]int64{"record": records.Load(), "started": started.Load(), "cancelled": cancelled.Load()}), nil
		})
	s.AddTool(&mcp.Tool{Name: "progress", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			for i := 1; i <= 3; i++ {
				req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(), Progress: float64(i), Total: 3, Message: fmt.Sprint("step ", i)})
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
		})
	s.AddTool(&mcp.Tool{Name: "slow", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			started.Add(1)
			select {
			case <-ctx.Done():
				cancelled.Add(1)
				return nil, ctx.Err()
			case <-time.After(time.Minute):
				return &mcp.CallToolResult{}, nil
			}
		})
	s.AddTool(&mcp.Tool{Name: "static", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{
				Meta:              mcp.Meta{"upstream/k": "v"},
				Content:           []mcp.Content{&mcp.TextContent{Text: "static"}},
				StructuredContent: json.RawMessage(`{"z":1,"a":2}`),
			}, nil
		})
	s.AddTool(&mcp.Tool{Name: "big", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("0123456789", 30000)}}}, nil
		})
	s.AddTool(&mcp.Tool{Name: "fails", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return nil, &jsonrpc.Error{Code: -32042, Message: "quota exhausted", Data: json.RawMessage(`{"retryAfter":30}`)}
		})
	_ = s.Run(context.Background(), &mcp.StdioTransport{})
}

// startStdioProxy starts a proxy whose upstream is this test binary on stdio.
func startStdioProxy(t *testing.T) *proxy.Proxy {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return startProxy(t, fmt.Sprintf("upstream:\n  command: %q\n  env:\n    %s: \"1\"\n", self, stdioUpstreamEnv))
}

type recorded struct {
	Calls int64          `json:"calls"`
	Args  string         `json:"args"`
	Meta  map[string]any `json:"meta"`
}

func decodeText[T any](t *testing.T, res *mcp.CallToolResult) T {
	t.Helper()
	var v T
	if res.IsError || json.Unmarshal([]byte(text(res)), &v) != nil {
		t.Fatalf("unexpected result %q (isError %v)", text(res), res.IsError)
	}
	return v
}

func stats(t *testing.T, cs *mcp.ClientSession) map[string]int64 {
	t.Helper()
	return decodeText[map[string]int64](t, callTool(t, cs, "stats", map[string]any{}))
}

// TestFastPath checks the stdio fast path for complete calls: the call
// reaches the upstream once with its arguments, _meta is cleaned,
// concurrent calls from sessions whose request IDs collide each get their
// own result, upstream errors and cancellation behave as on the SDK path,
// and calls that need the proxy's attention still get it.
func TestFastPath(t *testing.T) {
	p := startStdioProxy(t)
	d := downstreams[0] // pipe/2025-11-25: as on stdio

	t.Run("complete call forwarded once", func(t *testing.T) {
		cs := connect(t, p, d, nil, nil)
		before := proxy.FastCalls(p)
		r := decodeText[recorded](t, callTool(t, cs, "record", map[string]any{"message": "hello"}))
		if r.Args != `{"message":"hello"}` {
			t.Errorf("upstream got arguments %s", r.Args)
		}
		if got := proxy.FastCalls(p) - before; got != 1 {
			t.Errorf("%d calls took the fast path, want 1", got)
		}
		if s := stats(t, cs); s["record"] != r.Calls {
			t.Errorf("upstream counted %d record calls after call %d", s["record"], r.Calls)
		}
	})

	t.Run("raw bytes and _meta", func(t *testing.T) {
		cr, sw := io.Pipe()
		sr, cw := io.Pipe()
		ctx := context.Background()
		ss, err := p.Server().Connect(ctx, p.WrapTransport(&mcp.IOTransport{Reader: sr, Writer: sw}), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ss.Close(); cw.Close() })
		c := &rawLines{t: t, w: cw, r: bufio.NewReader(cr)}
		c.initialize()
		before := proxy.FastCalls(p)
		args := `{"message": "hi",  "n": 1.50, "z": {"b": 1, "a": 2}, "e": "\u00e9<&>"}`
		line := `{"jsonrpc":"2.0","id":"same-id","method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/clientInfo":{"name":"raw"},"app/trace":"t1","io.modelcontextprotocol/protocolVersion":"2025-11-25"},"name":"record","arguments":` + args + `}}` + "\n"
		if _, err := cw.Write([]byte(line)); err != nil {
			t.Fatal(err)
		}
		resp := readResponse(t, c.r, `"same-id"`)
		var res mcp.CallToolResult
		if err := json.Unmarshal(resp, &res); err != nil {
			t.Fatalf("result %s: %v", resp, err)
		}
		r := decodeText[recorded](t, &res)
		// The SDK's JSON-RPC encoding drops the white space between
		// tokens, on either path; the rest is the client's bytes.
		want := `{"message":"hi","n":1.50,"z":{"b":1,"a":2},"e":"\u00e9<&>"}`
		if r.Args != want {
			t.Errorf("upstream got arguments\n%s\nwant\n%s", r.Args, want)
		}
		if len(r.Meta) != 1 || r.Meta["app/trace"] != "t1" {
			t.Errorf("upstream got _meta %v, want only app/trace", r.Meta)
		}
		if got := proxy.FastCalls(p) - before; got != 1 {
			t.Errorf("%d calls took the fast path, want 1", got)
		}

		// A cancelled fast call is answered as the SDK answers a
		// cancelled request.
		send := func(line string) {
			if _, err := cw.Write([]byte(line + "\n")); err != nil {
				t.Fatal(err)
			}
		}
		send(`{"jsonrpc":"2.0","id":"c1","method":"tools/call","params":{"name":"slow","arguments":{}}}`)
		send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"c1","reason":"test"}}`)
		for {
			line, err := c.r.ReadBytes('\n')
			if err != nil {
				t.Fatal(err)
			}
			var resp struct {
				ID    string         `json:"id"`
				Error *jsonrpc.Error `json:"error"`
			}
			if json.Unmarshal(line, &resp) != nil || resp.ID != "c1" {
				continue
			}
			if resp.Error == nil || resp.Error.Message != "context canceled" {
				t.Errorf("cancelled call answered %s", line)
			}
			break
		}
	})

	t.Run("concurrent calls with colliding ids", func(t *testing.T) {
		sessions := []*mcp.ClientSession{connect(t, p, d, nil, nil), connect(t, p, d, nil, nil)}
		before := proxy.FastCalls(p)
		var wg sync.WaitGroup
		const n = 20
		for i, cs := range sessions {
			for j := range n {
				wg.Go(func() {
					msg := fmt.Sprintf("session %d call %d", i, j)
					res, err := cs.CallTool(callCtx(t), &mcp.CallToolParams{Name: "record", Arguments: map[string]any{"message": msg}})
					if err != nil {
						t.Errorf("%s: %v", msg, err)
						return
					}
					var r recorded
					if json.Unmarshal([]byte(text(res)), &r) != nil || r.Args != fmt.Sprintf(`{"message":%q}`, msg) {
						t.Errorf("%s answered with %s", msg, text(res))
					}
				})
			}
		}
		wg.Wait()
		if got := proxy.FastCalls(p) - before; got != 2*n {
			t.Errorf("%d calls took the fast path, want %d", got, 2*n)
		}
	})

	t.Run("progress before the result", func(t *testing.T) {
		seen := make(chan float64, 10)
		cs := connect(t, p, d, nil, &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			if r.Params.ProgressToken == "tok" {
				seen <- r.Params.Progress
			}
		}})
		params := &mcp.CallToolParams{Name: "progress", Arguments: map[string]any{}}
		params.SetProgressToken("tok")
		res, err := cs.CallTool(callCtx(t), params)
		if err != nil || text(res) != "done" {
			t.Fatalf("call: %v %v", res, err)
		}
		var got []float64
		for len(got) < 3 {
			select {
			case v := <-seen:
				got = append(got, v)
			case <-time.After(10 * time.Second):
				t.Fatalf("progress passed on: %v, want [1 2 3]", got)
			}
		}
		if fmt.Sprint(got) != "[1 2 3]" {
			t.Errorf("progress passed on: %v, want [1 2 3]", got)
		}
	})

	t.Run("large request and result", func(t *testing.T) {
		cs := connect(t, p, d, nil, nil)
		before := proxy.FastCalls(p)
		res := callTool(t, cs, "big", map[string]any{"pad": strings.Repeat("y", 100000)})
		if text(res) != strings.Repeat("0123456789", 30000) {
			t.Errorf("result of %d bytes", len(text(res)))
		}
		msg := strings.Repeat("z", 300000)
		r := decodeText[recorded](t, callTool(t, cs, "record", map[string]any{"message": msg}))
		if r.Args != `{"message":"`+msg+`"}` {
			t.Errorf("upstream got %d bytes of arguments", len(r.Args))
		}
		if got := proxy.FastCalls(p) - before; got != 2 {
			t.Errorf("%d calls took the fast path, want 2", got)
		}
	})

	t.Run("upstream error kept", func(t *testing.T) {
		cs := connect(t, p, d, nil, nil)
		_, err := cs.CallTool(callCtx(t), &mcp.CallToolParams{Name: "fails", Arguments: map[string]any{}})
		var we *jsonrpc.Error
		if !errors.As(err, &we) || we.Code != -32042 || we.Message != "quota exhausted" || string(we.Data) != `{"retryAfter":30}` {
			t.Errorf("error = %#v", err)
		}
	})

	t.Run("cancellation", func(t *testing.T) {
		cs := connect(t, p, d, nil, nil)
		s0 := stats(t, cs)
		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error, 1)
		go func() {
			_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{}})
			errc <- err
		}()
		waitStat(t, cs, "started", s0["started"]+1)
		cancel()
		if err := <-errc; err == nil {
			t.Error("cancelled call succeeded")
		}
		waitStat(t, cs, "cancelled", s0["cancelled"]+1)
		// The session still works.
		callTool(t, cs, "record", map[string]any{"message": "after"})
	})

	t.Run("missing field still elicited", func(t *testing.T) {
		e := &elicitor{answer: accept(map[string]any{"message": "from the form"})}
		cs := connect(t, p, d, e, nil)
		before := proxy.FastCalls(p)
		r := decodeText[recorded](t, callTool(t, cs, "record", map[string]any{"message": "  "}))
		if r.Args != `{"message":"from the form"}` || e.count() != 1 {
			t.Errorf("upstream got %s after %d forms", r.Args, e.count())
		}
		if got := proxy.FastCalls(p) - before; got != 0 {
			t.Errorf("%d calls took the fast path, want 0", got)
		}
	})

	t.Run("2026-07-28 per-request protocol", func(t *testing.T) {
		cs := connect(t, p, downstreams[1], nil, nil)
		before := proxy.FastCalls(p)
		res, err := cs.CallTool(callCtx(t), &mcp.CallToolParams{Name: "static", Arguments: map[string]any{}})
		if err != nil {
			t.Fatal(err)
		}
		if got := proxy.FastCalls(p) - before; got != 1 {
			t.Errorf("%d calls took the fast path, want 1", got)
		}
		info, _ := json.Marshal(res.Meta[mcp.MetaKeyServerInfo])
		if string(info) != `{"name":"mcp-elicitation-proxy","version":"test"}` || res.Meta["upstream/k"] != "v" {
			t.Errorf("result _meta %v", res.Meta)
		}
		sc, _ := json.Marshal(res.StructuredContent)
		if text(res) != "static" || string(sc) != `{"a":2,"z":1}` {
			t.Errorf("result %+v", res)
		}
		// A call that needs a form still goes through the SDK path.
		o := outcome(t, callTool(t, cs, "record", map[string]any{}))
		if o.Reason != plan.ReasonUnsupported {
			t.Errorf("outcome %+v", o)
		}
	})
}

func waitStat(t *testing.T, cs *mcp.ClientSession, key string, want int64) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for stats(t, cs)[key] < want {
		if time.Now().After(deadline) {
			t.Fatalf("upstream %s did not reach %d", key, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// readResponse reads lines until the response with the given raw id and
// returns its result.
func readResponse(t *testing.T, r *bufio.Reader, id string) json.RawMessage {
	t.Helper()
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			t.Fatalf("reading the response: %v", err)
		}
		var resp struct {
			ID     json.RawMessage `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if json.Unmarshal(line, &resp) != nil || strings.TrimSpace(string(resp.ID)) != id {
			continue
		}
		if resp.Error != nil {
			t.Fatalf("error %s", resp.Error)
		}
		return resp.Result
	}
}
