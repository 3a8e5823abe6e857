package gate_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/proxy"
	"github.com/mcp-elicitation/elicitation/internal/proxy/config"
	"github.com/mcp-elicitation/elicitation/internal/proxy/gate"
	"github.com/mcp-elicitation/elicitation/internal/testenv"
)

// counter sits between the proxy and its upstream and counts the
// tools/call requests that reach the upstream, by tool name.
type counter struct {
	mu    sync.Mutex
	calls map[string][]string // tool -> arguments, in order
}

func (c *counter) count(tool string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.calls[tool])
}

func (c *counter) args(tool string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.calls[tool]...)
}

// front returns an HTTP address that passes everything to target and
// records each tools/call.
func (c *counter) front(t *testing.T, target string) string {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: u.Scheme, Host: u.Host})
	rp.FlushInterval = -1
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			var msg struct {
				Method string `json:"method"`
				Params struct {
					Name      string          `json:"name"`
					Arguments json.RawMessage `json:"arguments"`
				} `json:"params"`
			}
			if json.Unmarshal(body, &msg) == nil && msg.Method == "tools/call" {
				c.mu.Lock()
				if c.calls == nil {
					c.calls = map[string][]string{}
				}
				c.calls[msg.Params.Name] = append(c.calls[msg.Params.Name], string(msg.Params.Arguments))
				c.mu.Unlock()
			}
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + u.Path
}

// startEverything starts the MCP reference server on streamable HTTP and
// returns its endpoint.
func startEverything(t *testing.T) string {
	t.Helper()
	node, script := testenv.Node(t), testenv.NodeModule(t, ".bin/mcp-server-everything")
	port := testenv.FreePort(t)
	cmd := exec.Command(node, script, "streamableHttp")
	cmd.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			return "http://" + addr + "/mcp"
		}
		if time.Now().After(deadline) {
			t.Fatalf("the reference server did not listen on %s: %s", addr, stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// gated is a proxy with its gate installed, in front of upstream, served
// over streamable HTTP, with the local elicitation service.
type gated struct {
	local *Local
	url   string // the proxy's MCP endpoint
	log   *testenv.SyncBuffer
}

// startGated builds the proxy as cmd/mcp-elicitation-proxy does: config,
// proxy.New, gate.Open, Install.
func startGated(t *testing.T, upstream, rest string) *gated {
	t.Helper()
	local := Start(t)
	yaml := fmt.Sprintf("upstream:\n  url: %q\nelicitation_service:\n  url: %q\n  wait_seconds: 1\n%s", upstream, local.MCPURL, rest)
	cfg, err := config.ParseWith([]byte(yaml), config.Options{})
	if err != nil {
		t.Fatalf("config: %v\n%s", err, yaml)
	}
	log := &testenv.SyncBuffer{}
	logger := slog.New(slog.NewTextHandler(log, nil))
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the proxy's log:\n%s", log.String())
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	p, err := proxy.New(ctx, proxy.Options{Config: cfg, Logger: logger, Version: "test"})
	if err != nil {
		t.Fatalf("proxy.New: %v", err)
	}
	t.Cleanup(func() { _ = p.Close() })
	g, closer, err := gate.Open(context.Background(), cfg, gate.OpenOptions{Logger: logger, Version: "test", Upstream: p.CallUpstream})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = closer.Close() })
	g.Install(p.Planner())
	srv := httptest.NewServer(p.HTTPHandler())
	t.Cleanup(srv.Close)
	return &gated{local: local, url: srv.URL, log: log}
}

// client connects an MCP client to the proxy; elicit, if set, is the
// host's own form (the client then declares form elicitation) and the
// client speaks 2025-11-25, on a session, as today's hosts that show forms
// do.
func (g *gated) client(t *testing.T, elicit func(*mcp.ElicitRequest) (*mcp.ElicitResult, error)) *mcp.ClientSession {
	return g.clientOn(t, elicit, "2025-11-25")
}

// clientOn is client on a chosen protocol version.
func (g *gated) clientOn(t *testing.T, elicit func(*mcp.ElicitRequest) (*mcp.ElicitResult, error), protocol string) *mcp.ClientSession {
	t.Helper()
	opts := &mcp.ClientOptions{}
	if elicit != nil {
		opts.ElicitationHandler = func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) { return elicit(r) }
	}
	var sopts *mcp.ClientSessionOptions
	if elicit != nil {
		sopts = &mcp.ClientSessionOptions{ProtocolVersion: protocol}
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, opts)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: g.url}, sopts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

type callResult struct {
	gate gate.Payload // when the proxy answered
	text string       // the upstream's first text, when forwarded
}

func call(t *testing.T, cs *mcp.ClientSession, tool string, args any) callResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("tools/call %s: %v", tool, err)
	}
	var out callResult
	if len(res.Content) > 0 {
		if tc, ok := res.Content[0].(*mcp.TextContent); ok {
			out.text = tc.Text
		}
	}
	if sc, err := json.Marshal(res.StructuredContent); err == nil && res.StructuredContent != nil {
		_ = json.Unmarshal(sc, &out.gate)
	}
	return out
}

func wantPending(t *testing.T, r callResult) gate.Payload {
	t.Helper()
	if r.gate.Error != gate.ErrorPending || r.gate.ReviewURL == "" || r.gate.ElicitationID == "" {
		t.Fatalf("want elicitation_pending, got %q %+v", r.text, r.gate)
	}
	return r.gate
}

func needBrowser(t *testing.T) {
	testenv.Slow(t, "server-everything and Chromium")
}

const echoConfirmed = "tools:\n  echo:\n    confirm_if:\n      always: true\n      message: \"Let the agent echo this?\"\n"

// A gated call, approved on the review page in Chromium, is forwarded
// exactly once; an approval is used once; changed arguments are asked
// again; a declined call never reaches the upstream.
func TestEverythingConfirmOnTheReviewPage(t *testing.T) {
	needBrowser(t)
	t.Parallel()
	up := &counter{}
	g := startGated(t, up.front(t, startEverything(t)), echoConfirmed)
	agent := g.client(t, nil) // a host without elicitation

	p := wantPending(t, call(t, agent, "echo", map[string]any{"message": "deploy v1.3"}))
	if up.count("echo") != 0 {
		t.Fatal("forwarded before the approval")
	}
	seen := Review(t, p.ReviewURL, Answer{Decision: "submitted"})
	for _, want := range []string{"Let the agent echo this?", "echo", "Echoes back the input", "deploy v1.3", p.ArgumentsDigest} {
		if !strings.Contains(seen.Shown, want) {
			t.Errorf("the review page does not show %q:\n%s", want, seen.Shown)
		}
	}
	if r := call(t, agent, "echo", map[string]any{"message": "deploy v1.3"}); r.text != "Echo: deploy v1.3" {
		t.Fatalf("the approved retry: %q %+v", r.text, r.gate)
	}
	if n := up.count("echo"); n != 1 {
		t.Fatalf("forwarded %d times, want once", n)
	}
	// The approval was used: the same call again needs a new one.
	again := wantPending(t, call(t, agent, "echo", map[string]any{"message": "deploy v1.3"}))
	if again.ElicitationID == p.ElicitationID {
		t.Error("a used approval was reused")
	}
	// Changed arguments after an approval: asked again, under another digest.
	Review(t, again.ReviewURL, Answer{Decision: "submitted"})
	changed := wantPending(t, call(t, agent, "echo", map[string]any{"message": "deploy v2.0"}))
	if changed.ElicitationID == again.ElicitationID || changed.ArgumentsDigest == again.ArgumentsDigest {
		t.Errorf("changed arguments rode on the approval: %+v", changed)
	}
	if n := up.count("echo"); n != 1 {
		t.Fatalf("forwarded %d times after changed arguments, want once", n)
	}
	// Declined on the page: never forwarded.
	Review(t, changed.ReviewURL, Answer{Decision: "declined", Comment: "ship v2.1 instead"})
	r := call(t, agent, "echo", map[string]any{"message": "deploy v2.0"})
	if r.gate.Error != gate.ErrorBlocked || r.gate.Reason != gate.ReasonConfirmationDeclined {
		t.Fatalf("declined: %q %+v", r.text, r.gate)
	}
	if r.gate.Comment == nil || *r.gate.Comment != "ship v2.1 instead" || !strings.Contains(r.gate.Message, "ship v2.1 instead") {
		t.Errorf("the reviewer's comment did not reach the agent: %+v", r.gate)
	}
	if n := up.count("echo"); n != 1 || strings.Contains(strings.Join(up.args("echo"), " "), "v2.0") {
		t.Fatalf("a declined call reached the upstream: %v", up.args("echo"))
	}
	logs := g.log.String()
	for _, want := range []string{"decision=approved", "decision=declined", "decision=pending", "tool=echo", p.ArgumentsDigest} {
		if !strings.Contains(logs, want) {
			t.Errorf("the proxy's log lacks %q", want)
		}
	}
	if strings.Contains(logs, "deploy v") || strings.Contains(logs, "v2.1") {
		t.Error("argument values or the comment in the proxy's log")
	}
	// The service's audit trail of the review request names the tool and
	// the digest (its context), and records the decision.
	trail, err := g.local.Service.OperatorAudit(context.Background(), p.ElicitationID)
	if err != nil {
		t.Fatal(err)
	}
	var actions []string
	note := "gate=confirm tool=echo digest=" + p.ArgumentsDigest
	for _, e := range trail.Entries {
		actions = append(actions, string(e.Action))
		if (e.Action == "created" || e.Action == "result_fetched") && !strings.Contains(e.Detail, note) {
			t.Errorf("the %s entry's detail %q does not name the tool and digest", e.Action, e.Detail)
		}
		if strings.Contains(e.Detail, "deploy") {
			t.Errorf("an argument value in the audit trail: %q", e.Detail)
		}
	}
	if s := strings.Join(actions, ","); !strings.Contains(s, "created") || !strings.Contains(s, "decided") || !strings.Contains(s, "result_fetched") {
		t.Errorf("audit trail %s", s)
	}
}

// A host without elicitation gets elicitation_pending for the missing
// field; the reviewer fills it on the page; the agent's retry with the same
// arguments goes through with the reviewer's value.
func TestEverythingFillOnTheReviewPage(t *testing.T) {
	needBrowser(t)
	t.Parallel()
	up := &counter{}
	g := startGated(t, up.front(t, startEverything(t)), "elicitation:\n  fallback_on_unsupported: review_page\ntools:\n  echo:\n    elicit:\n      message: \"What should the reference server echo?\"\n")
	agent := g.client(t, nil)
	p := wantPending(t, call(t, agent, "echo", map[string]any{}))
	if strings.Join(p.MissingOrAmbiguous, ",") != "message" {
		t.Errorf("missing %v", p.MissingOrAmbiguous)
	}
	seen := Review(t, p.ReviewURL, Answer{Decision: "submitted", Fill: map[string]string{"message": "typed on the page"}})
	if !strings.Contains(seen.Shown, "What should the reference server echo?") {
		t.Errorf("the page does not show the configured message:\n%s", seen.Shown)
	}
	if r := call(t, agent, "echo", map[string]any{}); r.text != "Echo: typed on the page" {
		t.Fatalf("the retry: %q %+v", r.text, r.gate)
	}
	if n := up.count("echo"); n != 1 {
		t.Errorf("forwarded %d times", n)
	}
}

// An ambiguous argument becomes a selection among the candidates an
// upstream tool lists; the pick reaches the upstream.
func TestEverythingAmbiguousSelection(t *testing.T) {
	needBrowser(t)
	t.Parallel()
	up := &counter{}
	g := startGated(t, up.front(t, startEverything(t)), `tools:
  echo:
    ambiguous_if:
      field: message
      query_min_length: 4
      candidates:
        tool: get-resource-links
        arguments: {count: 3}
        items: content
        id: uri
        label: name
        value: name
`)
	agent := g.client(t, nil)
	p := wantPending(t, call(t, agent, "echo", map[string]any{"message": "res"}))
	if up.count("get-resource-links") != 1 {
		t.Errorf("the candidate source was called %d times", up.count("get-resource-links"))
	}
	pick := 1
	seen := Review(t, p.ReviewURL, Answer{Decision: "submitted", Pick: &pick})
	for _, want := range []string{"Blob Resource 1", "Text Resource 2", "Blob Resource 3"} {
		if !strings.Contains(seen.Shown, want) {
			t.Errorf("the selection does not offer %q:\n%s", want, seen.Shown)
		}
	}
	if r := call(t, agent, "echo", map[string]any{"message": "res"}); r.text != "Echo: Text Resource 2" {
		t.Fatalf("the pick did not reach the upstream: %q %+v", r.text, r.gate)
	}
	if got := up.args("echo"); len(got) != 1 || got[0] != `{"message":"Text Resource 2"}` {
		t.Errorf("upstream got %v", got)
	}
}

// The same gate through a host that can elicit uses the host's own form:
// no review page is created. A 2025-11-25 host answers during the call; a
// 2026-07-28 host answers the gate's input request and retries.
func TestEverythingConfirmOnTheHost(t *testing.T) {
	t.Parallel()
	for _, protocol := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(protocol, func(t *testing.T) { confirmOnTheHost(t, protocol) })
	}
}

func confirmOnTheHost(t *testing.T, protocol string) {
	needBrowser(t)
	up := &counter{}
	g := startGated(t, up.front(t, startEverything(t)), echoConfirmed)
	var mu sync.Mutex
	var asked []string
	answer := "accept"
	agent := g.clientOn(t, func(r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, r.Params.Message)
		return &mcp.ElicitResult{Action: answer}, nil
	}, protocol)
	if got := agent.InitializeResult().ProtocolVersion; got != protocol {
		t.Fatalf("negotiated %s, want %s", got, protocol)
	}
	if r := call(t, agent, "echo", map[string]any{"message": "via the host"}); r.text != "Echo: via the host" {
		t.Fatalf("approved on the host: %q %+v", r.text, r.gate)
	}
	mu.Lock()
	if len(asked) != 1 || !strings.Contains(asked[0], "Let the agent echo this?") || !strings.Contains(asked[0], "via the host") {
		t.Errorf("the host was asked %q", asked)
	}
	answer = "decline"
	mu.Unlock()
	if r := call(t, agent, "echo", map[string]any{"message": "no"}); r.gate.Reason != gate.ReasonConfirmationDeclined {
		t.Fatalf("declined on the host: %q %+v", r.text, r.gate)
	}
	if n := up.count("echo"); n != 1 {
		t.Errorf("forwarded %d times", n)
	}
	if ids := g.local.Created(); len(ids) != 0 {
		t.Errorf("review pages were created for a host that can elicit: %v", ids)
	}
}

// The worked configuration of docs/gate.md does what the page says.
func TestWorkedExample(t *testing.T) {
	needBrowser(t)
	t.Parallel()
	root := testenv.Root(t)
	raw, err := os.ReadFile(root + "/examples/gate-everything.config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(raw), `listen: "127.0.0.1:8081"`, `listen: "127.0.0.1:0"`, 1)
	text = strings.Replace(text, "wait_seconds: 20", "wait_seconds: 1", 1)
	cfg, err := config.ParseWith([]byte(text), config.Options{})
	if err != nil {
		t.Fatal(err)
	}
	log := &testenv.SyncBuffer{}
	logger := slog.New(slog.NewTextHandler(log, nil))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	p, err := proxy.New(ctx, proxy.Options{Config: cfg, Logger: logger, Version: "test", UpstreamDir: root})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	g, closer, err := gate.Open(ctx, cfg, gate.OpenOptions{Logger: logger, Version: "test", Upstream: p.CallUpstream})
	if err != nil {
		t.Fatal(err)
	}
	defer closer.Close()
	g.Install(p.Planner())
	srv := httptest.NewServer(p.HTTPHandler())
	defer srv.Close()
	agent := (&gated{url: srv.URL}).client(t, nil)

	sum := map[string]any{"a": 500, "b": 1}
	first := wantPending(t, call(t, agent, "get-sum", sum))
	if !strings.Contains(log.String(), "review requested: open the review page") || !strings.Contains(log.String(), first.ReviewURL) {
		t.Error("the review URL is not on the proxy's standard error")
	}
	seen := Review(t, first.ReviewURL, Answer{Decision: "submitted"})
	for _, want := range []string{"Let the agent add these numbers?", "get-sum", "Returns the sum of two numbers", "500", first.ArgumentsDigest} {
		if !strings.Contains(seen.Shown, want) {
			t.Errorf("the page does not show %q:\n%s", want, seen.Shown)
		}
	}
	if r := call(t, agent, "get-sum", sum); r.text != "The sum of 500 and 1 is 501." {
		t.Fatalf("approved: %q %+v", r.text, r.gate)
	}
	wantPending(t, call(t, agent, "get-sum", sum))
	if r := call(t, agent, "get-sum", map[string]any{"a": 5, "b": 1}); r.text != "The sum of 5 and 1 is 6." {
		t.Fatalf("below the condition: %q %+v", r.text, r.gate)
	}
	// The reference server declares every tool non-destructive, so the
	// destructive policy lets a clear echo through.
	if r := call(t, agent, "echo", map[string]any{"message": "clear enough"}); r.text != "Echo: clear enough" {
		t.Fatalf("echo: %q %+v", r.text, r.gate)
	}
	sel := wantPending(t, call(t, agent, "echo", map[string]any{"message": "hi"}))
	pick := 1
	seen = Review(t, sel.ReviewURL, Answer{Decision: "submitted", Pick: &pick})
	if !strings.Contains(seen.Shown, "Blob Resource 5") {
		t.Errorf("five candidates not offered:\n%s", seen.Shown)
	}
	if r := call(t, agent, "echo", map[string]any{"message": "hi"}); r.text != "Echo: Text Resource 2" {
		t.Fatalf("the pick: %q %+v", r.text, r.gate)
	}
}

// On stdio (client and upstream both), the fast path below the SDK forwards
// only calls the planner forwards untouched: a gated call is held, and a
// call no rule names still takes the fast path.
func TestStdioFastPathKeepsTheGate(t *testing.T) {
	testenv.Slow(t, "server-everything")
	t.Parallel()
	root := testenv.Root(t)
	local := Start(t)
	node, script := testenv.Node(t), testenv.NodeModule(t, ".bin/mcp-server-everything")
	yaml := fmt.Sprintf("upstream:\n  command: %q\n  args: [%q]\nelicitation_service:\n  url: %q\n  wait_seconds: 1\n%s", node, script, local.MCPURL, echoConfirmed)
	cfg, err := config.ParseWith([]byte(yaml), config.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	p, err := proxy.New(ctx, proxy.Options{Config: cfg, Version: "test", UpstreamDir: root})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	g, closer, err := gate.Open(ctx, cfg, gate.OpenOptions{Version: "test", Upstream: p.CallUpstream})
	if err != nil {
		t.Fatal(err)
	}
	defer closer.Close()
	g.Install(p.Planner())
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	ss, err := p.Server().Connect(ctx, p.WrapTransport(&mcp.IOTransport{Reader: sr, Writer: sw}), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, nil).Connect(ctx, &mcp.IOTransport{Reader: cr, Writer: cw}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	p1 := wantPending(t, call(t, cs, "echo", map[string]any{"message": "over stdio"}))
	local.Decide(t, p1.ReviewURL, "submitted", nil)
	if r := call(t, cs, "echo", map[string]any{"message": "over stdio"}); r.text != "Echo: over stdio" {
		t.Fatalf("approved over stdio: %q %+v", r.text, r.gate)
	}
	wantPending(t, call(t, cs, "echo", map[string]any{"message": "over stdio"}))
	if r := call(t, cs, "get-sum", map[string]any{"a": 1, "b": 2}); r.text != "The sum of 1 and 2 is 3." {
		t.Fatalf("an ungated tool: %q", r.text)
	}
}

// A real go-sdk upstream whose tools declare their own annotations: under
// policies.confirm_destructive the proxy reads them from the upstream's
// listing and gates only the tools that may destroy.
func TestDestructiveAnnotationsThroughTheProxy(t *testing.T) {
	up := mcp.NewServer(&mcp.Implementation{Name: "files", Version: "1"}, nil)
	tr, fa := true, false
	var mu sync.Mutex
	var ran []string
	add := func(name string, ann *mcp.ToolAnnotations) {
		up.AddTool(&mcp.Tool{Name: name, Description: "Works on a file.", Annotations: ann,
			InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
			func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				mu.Lock()
				ran = append(ran, name)
				mu.Unlock()
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name + " done"}}}, nil
			})
	}
	add("delete_file", &mcp.ToolAnnotations{DestructiveHint: &tr})
	add("read_file", &mcp.ToolAnnotations{ReadOnlyHint: true})
	add("append_file", &mcp.ToolAnnotations{DestructiveHint: &fa})
	add("touch_file", nil) // no annotations: the specification's defaults say it may destroy
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return up }, nil))
	t.Cleanup(srv.Close) // after the proxy's cleanup has closed its session

	g := startGated(t, srv.URL, "policies:\n  confirm_destructive:\n    enabled: true\n")
	agent := g.client(t, nil)
	for _, tc := range []struct {
		tool  string
		gated bool
	}{{"delete_file", true}, {"read_file", false}, {"append_file", false}, {"touch_file", true}} {
		r := call(t, agent, tc.tool, map[string]any{"path": "/tmp/x"})
		if tc.gated {
			p := wantPending(t, r)
			if c := g.local.Context(t, p.ReviewURL); c["why"] != "the tool's annotations say it may change or delete data" {
				t.Errorf("%s: reviewer told %v", tc.tool, c["why"])
			}
		} else if r.text != tc.tool+" done" {
			t.Errorf("%s: %q %+v", tc.tool, r.text, r.gate)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(ran, ",") != "read_file,append_file" {
		t.Errorf("the upstream ran %v", ran)
	}
}

// A call filled in on the review page is approved by that answer: a
// confirmation rule on the same tool does not ask a second time.
func TestFillOnThePageIsTheApproval(t *testing.T) {
	testenv.Slow(t, "server-everything")
	t.Parallel()
	up := &counter{}
	g := startGated(t, up.front(t, startEverything(t)), "elicitation:\n  fallback_on_unsupported: review_page\n"+echoConfirmed)
	agent := g.client(t, nil)
	p := wantPending(t, call(t, agent, "echo", map[string]any{}))
	g.local.Decide(t, p.ReviewURL, "submitted", map[string]string{"message": "filled and approved"})
	if r := call(t, agent, "echo", map[string]any{}); r.text != "Echo: filled and approved" {
		t.Fatalf("the retry: %q %+v", r.text, r.gate)
	}
	if !strings.Contains(g.log.String(), "channel=review_page_form") {
		t.Error("the approval by the form is not logged")
	}
	// A complete call is still confirmed.
	wantPending(t, call(t, agent, "echo", map[string]any{"message": "complete"}))
	if n := up.count("echo"); n != 1 {
		t.Errorf("forwarded %d times", n)
	}
}
