package proxy_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/proxy"
	"github.com/mcp-elicitation/elicitation/internal/proxy/config"
	"github.com/mcp-elicitation/elicitation/internal/proxy/plan"
	"github.com/mcp-elicitation/elicitation/internal/testenv"
)

// repoRoot is the module root, where node_modules lives.
func repoRoot(t testing.TB) string { return testenv.Root(t) }

// everything returns the command line that starts the MCP reference server,
// failing the test with the fix when it is not installed.
func everything(t testing.TB) (node, script string) {
	t.Helper()
	return testenv.Node(t), testenv.NodeModule(t, ".bin/mcp-server-everything")
}

func freePort(t testing.TB) int { return testenv.FreePort(t) }

// offer hands v to the test through ch without blocking. A client's
// notification handler must never block: closing a client session waits
// for its handlers, so a handler stuck on a full channel (a test that has
// stopped reading, more list_changed notifications than it buffered) holds
// the test's cleanup, and the package, until go test's timeout. What a full
// channel drops, the test was not reading.
func offer[T any](ch chan<- T, v T) {
	select {
	case ch <- v:
	default:
	}
}

// callCtx bounds one request of a test, so that a proxy that never answers
// fails the test that asked, by name, instead of holding the package until
// go test's timeout.
func callCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// startEverythingHTTP starts the reference server on streamable HTTP and
// returns its MCP endpoint.
func startEverythingHTTP(t testing.TB) string {
	t.Helper()
	return startEverythingOn(t, "streamableHttp") + "/mcp"
}

// startEverythingSSE starts the reference server on the legacy SSE
// transport and returns its /sse endpoint.
func startEverythingSSE(t testing.TB) string {
	t.Helper()
	return startEverythingOn(t, "sse") + "/sse"
}

func startEverythingOn(t testing.TB, transport string) string {
	t.Helper()
	return startEverythingAt(t, transport, freePort(t))
}

// startEverythingAt starts the reference server on the given port and
// returns its base URL once it listens.
func startEverythingAt(t testing.TB, transport string, port int) string {
	t.Helper()
	node, script := everything(t)
	cmd := exec.Command(node, script, transport)
	cmd.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	})
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the reference server did not listen on %s: %s", addr, stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	return "http://" + addr
}

// testLogger writes the proxy's logs to the test log, until the test ends
// (a child's last words may arrive while it is being cleaned up).
func testLogger(t testing.TB) *slog.Logger {
	w := &testWriter{t: t}
	t.Cleanup(func() {
		w.mu.Lock()
		w.done = true
		w.mu.Unlock()
	})
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type testWriter struct {
	t    testing.TB
	mu   sync.Mutex
	done bool
}

func (w *testWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done {
		w.t.Log(strings.TrimRight(string(p), "\n"))
	}
	return len(p), nil
}

// startProxy builds a proxy from a YAML configuration.
func startProxy(t testing.TB, yaml string) *proxy.Proxy {
	t.Helper()
	cfg, err := config.ParseWith([]byte(yaml), config.Options{})
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	p, err := proxy.New(ctx, proxy.Options{Config: cfg, Logger: testLogger(t), UpstreamDir: repoRoot(t), Version: "test"})
	if err != nil {
		t.Fatalf("proxy.New: %v", err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// downstream says how a test client reaches the proxy.
type downstream struct {
	name string
	// http serves the proxy over streamable HTTP; otherwise the client
	// is connected over an in-process pipe, as on stdio.
	http bool
	// protocol is the version the client asks for.
	protocol string
}

var downstreams = []downstream{
	{"pipe/2025-11-25", false, "2025-11-25"},
	{"pipe/2026-07-28", false, "2026-07-28"},
	{"http/2025-11-25", true, "2025-11-25"},
	{"http/2026-07-28", true, "2026-07-28"},
}

// elicitor answers the proxy's forms as a test tells it to and records
// what it was asked.
type elicitor struct {
	mu     sync.Mutex
	asked  []*mcp.ElicitParams
	answer func(*mcp.ElicitParams) (*mcp.ElicitResult, error)
}

func (e *elicitor) handle(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	e.mu.Lock()
	e.asked = append(e.asked, req.Params)
	e.mu.Unlock()
	return e.answer(req.Params)
}

func (e *elicitor) count() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.asked)
}

func (e *elicitor) last() *mcp.ElicitParams {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.asked) == 0 {
		return nil
	}
	return e.asked[len(e.asked)-1]
}

func accept(content map[string]any) func(*mcp.ElicitParams) (*mcp.ElicitResult, error) {
	return func(*mcp.ElicitParams) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "accept", Content: content}, nil
	}
}

func action(a string) func(*mcp.ElicitParams) (*mcp.ElicitResult, error) {
	return func(*mcp.ElicitParams) (*mcp.ElicitResult, error) { return &mcp.ElicitResult{Action: a}, nil }
}

// connect connects a go-sdk client to the proxy. With e nil the client
// declares no elicitation capability.
func connect(t testing.TB, p *proxy.Proxy, d downstream, e *elicitor, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	return connectClient(t, p, d, e, opts, nil)
}

// connectClient is connect with a hook that prepares the client (roots)
// before it connects.
func connectClient(t testing.TB, p *proxy.Proxy, d downstream, e *elicitor, opts *mcp.ClientOptions, prepare func(*mcp.Client)) *mcp.ClientSession {
	t.Helper()
	var o mcp.ClientOptions
	if opts != nil {
		o = *opts
	}
	if e != nil {
		o.ElicitationHandler = e.handle
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, &o)
	if prepare != nil {
		prepare(client)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var transport mcp.Transport
	if d.http {
		srv := httptest.NewServer(p.HTTPHandler())
		t.Cleanup(srv.Close)
		transport = &mcp.StreamableClientTransport{Endpoint: srv.URL}
	} else {
		// Newline-delimited JSON over pipes, as on stdio (with the fast
		// path for complete calls).
		cr, sw := io.Pipe()
		sr, cw := io.Pipe()
		ct := &mcp.IOTransport{Reader: cr, Writer: cw}
		ss, err := p.Server().Connect(ctx, p.WrapTransport(&mcp.IOTransport{Reader: sr, Writer: sw}), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ss.Close() })
		transport = ct
	}
	cs, err := client.Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: d.protocol})
	if err != nil {
		t.Fatalf("connecting to the proxy: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func callTool(t testing.TB, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("tools/call %s: %v", name, err)
	}
	return res
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// outcome decodes the proxy's structured refusal.
func outcome(t testing.TB, res *mcp.CallToolResult) plan.Outcome {
	t.Helper()
	var o plan.Outcome
	b, err := json.Marshal(res.StructuredContent)
	if err != nil || json.Unmarshal(b, &o) != nil || o.Error == "" {
		t.Fatalf("result is not a proxy outcome: %s (text %q)", b, text(res))
	}
	if res.IsError {
		t.Errorf("outcome %s with isError: the original returns an ordinary tool result", o.Reason)
	}
	var fromText plan.Outcome
	if err := json.Unmarshal([]byte(text(res)), &fromText); err != nil || !reflect.DeepEqual(fromText, o) {
		t.Errorf("text content %q does not carry the same outcome", text(res))
	}
	return o
}

// rawLines is a newline-delimited JSON-RPC peer that reads results as
// raw bytes, independent of any SDK.
type rawLines struct {
	t   testing.TB
	w   io.Writer
	r   *bufio.Reader
	seq int
}

func (c *rawLines) call(method string, params any) json.RawMessage {
	c.t.Helper()
	c.seq++
	msg, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.seq, "method": method, "params": params})
	if _, err := c.w.Write(append(msg, '\n')); err != nil {
		c.t.Fatal(err)
	}
	for {
		line, err := c.r.ReadBytes('\n')
		if err != nil {
			c.t.Fatalf("reading the %s response: %v", method, err)
		}
		var resp struct {
			ID     *int            `json:"id"`
			Method string          `json:"method"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(line, &resp); err != nil {
			c.t.Fatalf("bad line %q: %v", line, err)
		}
		if resp.ID == nil || *resp.ID != c.seq || resp.Method != "" {
			continue // a notification or a request to the client
		}
		if resp.Error != nil {
			c.t.Fatalf("%s: error %s", method, resp.Error)
		}
		return resp.Result
	}
}

func (c *rawLines) notify(method string) {
	msg, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": method})
	c.w.Write(append(msg, '\n'))
}

// upstreamCaps are the client capabilities the proxy declares to its
// upstream; a direct client compared with the proxy declares the same, so
// that the upstream offers it the same tools.
var upstreamCaps = map[string]any{
	"roots":       map[string]any{"listChanged": true},
	"sampling":    map[string]any{},
	"elicitation": map[string]any{"form": map[string]any{}, "url": map[string]any{}},
}

func (c *rawLines) initialize() { c.initializeWith(map[string]any{}) }

func (c *rawLines) initializeWith(caps map[string]any) {
	c.call("initialize", map[string]any{
		"protocolVersion": "2025-11-25",
		"capabilities":    caps,
		"clientInfo":      map[string]any{"name": "raw", "version": "1"},
	})
	c.notify("notifications/initialized")
}

// rawToolsFromCommand runs an MCP server command and returns its raw
// tools/list result.
func rawToolsFromCommand(t testing.TB, dir string, name string, args ...string) json.RawMessage {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		in.Close()
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	}()
	c := &rawLines{t: t, w: in, r: bufio.NewReader(out)}
	c.initializeWith(upstreamCaps)
	return c.call("tools/list", map[string]any{})
}

// rawToolsFromProxy returns the proxy's raw tools/list result as a
// stdio-like client sees it.
func rawToolsFromProxy(t testing.TB, p *proxy.Proxy) json.RawMessage {
	t.Helper()
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.Server().Run(ctx, &mcp.IOTransport{Reader: sr, Writer: sw})
	}()
	defer func() {
		cancel()
		cw.Close()
		sw.Close()
		<-done
	}()
	c := &rawLines{t: t, w: cw, r: bufio.NewReader(cr)}
	c.initialize()
	return c.call("tools/list", map[string]any{})
}

// rawToolsFromHTTP returns an HTTP MCP endpoint's raw tools/list result.
func rawToolsFromHTTP(t testing.TB, url string) json.RawMessage {
	t.Helper()
	session := ""
	post := func(body map[string]any) json.RawMessage {
		b, _ := json.Marshal(body)
		req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(b))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if s := resp.Header.Get("Mcp-Session-Id"); s != "" {
			session = s
		}
		data, _ := io.ReadAll(resp.Body)
		if _, isCall := body["id"]; !isCall {
			return nil
		}
		if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			for _, line := range strings.Split(string(data), "\n") {
				if v, ok := strings.CutPrefix(line, "data:"); ok {
					var m struct {
						ID     any             `json:"id"`
						Result json.RawMessage `json:"result"`
					}
					if json.Unmarshal([]byte(strings.TrimSpace(v)), &m) == nil && m.ID != nil {
						return m.Result
					}
				}
			}
			t.Fatalf("no response in %q", data)
		}
		var m struct {
			Result json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatalf("bad response %q (status %d)", data, resp.StatusCode)
		}
		return m.Result
	}
	post(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{
		"protocolVersion": "2025-11-25", "capabilities": upstreamCaps, "clientInfo": map[string]any{"name": "raw", "version": "1"},
	}})
	post(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	return post(map[string]any{"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": map[string]any{}})
}

// toolsByName splits a raw tools/list result into each tool's raw bytes.
func toolsByName(t testing.TB, raw json.RawMessage) (map[string]json.RawMessage, []string) {
	t.Helper()
	var res struct {
		Tools []json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatalf("tools/list result %s: %v", raw, err)
	}
	m := map[string]json.RawMessage{}
	var names []string
	for _, tool := range res.Tools {
		var n struct{ Name string }
		json.Unmarshal(tool, &n)
		m[n.Name] = tool
		names = append(names, n.Name)
	}
	return m, names
}

// countingUpstream is an in-process upstream MCP server that counts the
// calls it receives, so tests can prove that a call did not reach it.
type countingUpstream struct {
	URL    string
	server *mcp.Server
	calls  sync.Map // tool name -> *atomic.Int64
	args   sync.Map // tool name -> last raw arguments
}

func (u *countingUpstream) count(tool string) int64 {
	v, _ := u.calls.LoadOrStore(tool, new(atomic.Int64))
	return v.(*atomic.Int64).Load()
}

func (u *countingUpstream) lastArgs(tool string) string {
	v, _ := u.args.Load(tool)
	s, _ := v.(string)
	return s
}

// addTool registers a tool whose input schema is given as JSON.
func (u *countingUpstream) addTool(name, schema string, h mcp.ToolHandler) {
	if h == nil {
		h = func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "called " + name + " with " + string(req.Params.Arguments)}}}, nil
		}
	}
	u.server.AddTool(&mcp.Tool{Name: name, InputSchema: json.RawMessage(schema)}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		v, _ := u.calls.LoadOrStore(name, new(atomic.Int64))
		v.(*atomic.Int64).Add(1)
		u.args.Store(name, string(req.Params.Arguments))
		return h(ctx, req)
	})
}

func newCountingUpstream(t testing.TB) *countingUpstream {
	t.Helper()
	u := &countingUpstream{server: mcp.NewServer(&mcp.Implementation{Name: "counting-upstream", Version: "1"}, nil)}
	u.addTool("echo", `{"type":"object","properties":{"message":{"type":"string","description":"Text to echo"}},"required":["message"]}`, nil)
	u.addTool("deploy", `{"type":"object","properties":{"service":{"type":"string"},"api_key":{"type":"string"}},"required":["service","api_key"]}`, nil)
	u.addTool("configure", `{"type":"object","properties":{"settings":{"type":"object"},"tags":{"type":"array","items":{"type":"object"}}},"required":["settings"]}`, nil)
	u.addTool("count", `{"type":"object","properties":{"n":{"type":"integer","minimum":1,"maximum":10},"verbose":{"type":"boolean"}},"required":["n"]}`, nil)
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return u.server }, nil))
	t.Cleanup(srv.Close)
	u.URL = srv.URL
	return u
}
