// Package tasktest is the MCP Tasks scenario every deployment of the MCP
// tools passes (docs/protocol.md, "Tasks"), with a go-sdk client sending
// the raw methods: both flavours (2025-11-25 params.task with tasks/get,
// tasks/result and tasks/cancel; the 2026-07-28 extension with tasks/get,
// tasks/update and tasks/cancel), deciding on the review page as a browser
// would: a decision, a decline with a comment, a selection, a cancel that
// the review page then refuses, and another principal's task, which does
// not exist for them. The go-sdk client has no Tasks: its transport adds
// params.task to the calls it is told to, and the tasks methods are custom
// methods.
package tasktest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The two flavours' protocol versions.
const (
	Core = "2025-11-25"
	Ext  = "2026-07-28"
)

// ExtCaps declares the 2026-07-28 extension; ExtURLCaps URL elicitation too.
var (
	ExtCaps    = &mcp.ClientCapabilities{Extensions: map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}}
	ExtURLCaps = &mcp.ClientCapabilities{Extensions: map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}, Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}}}
)

// Options say how a Client reaches its server.
type Options struct {
	URL     string
	Header  http.Header // added to every request (an API key)
	Version string      // Core or Ext
	Caps    *mcp.ClientCapabilities
	// Transport carries the requests (routing between processes, say);
	// nil: http.DefaultTransport.
	Transport http.RoundTripper
	// NoName leaves Mcp-Name off the tasks methods (to see it refused).
	NoName bool
	// Elicit, if set, is the client's elicitation handler.
	Elicit func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error)
}

// Client is a go-sdk client that speaks Tasks through its transport.
type Client struct {
	t  testing.TB
	CS *mcp.ClientSession
	rt *rawTrip
}

type rawTrip struct {
	o    *Options
	mu   sync.Mutex
	task json.RawMessage // added to the next tools/call as params.task
	last json.RawMessage // the JSON-RPC answer to the last tools/call
}

func (rt *rawTrip) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range rt.o.Header {
		r.Header[k] = v
	}
	rt.mu.Lock()
	task := rt.task
	rt.task = nil
	rt.mu.Unlock()
	isCall := false
	if r.Body != nil && r.Method == http.MethodPost {
		b, _ := io.ReadAll(r.Body)
		var msg map[string]json.RawMessage
		if json.Unmarshal(b, &msg) == nil {
			switch m := string(msg["method"]); {
			case m == `"tools/call"`:
				isCall = true
				if task != nil {
					var p map[string]json.RawMessage
					_ = json.Unmarshal(msg["params"], &p)
					p["task"] = task
					msg["params"], _ = json.Marshal(p)
					b, _ = json.Marshal(msg)
				}
			case strings.HasPrefix(m, `"tasks/`) && rt.o.Version >= Ext && !rt.o.NoName:
				var p struct {
					TaskID string `json:"taskId"`
				}
				_ = json.Unmarshal(msg["params"], &p)
				r.Header.Set("Mcp-Name", p.TaskID)
			}
		}
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(b)), int64(len(b))
	}
	base := rt.o.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	res, err := base.RoundTrip(r)
	if err != nil || !isCall {
		return res, err
	}
	b, err := io.ReadAll(res.Body)
	_ = res.Body.Close()
	if err != nil {
		return nil, err
	}
	rt.mu.Lock()
	rt.last = AnswerOf(b)
	rt.mu.Unlock()
	res.Body = io.NopCloser(bytes.NewReader(b))
	return res, nil
}

// AnswerOf finds the JSON-RPC response in a JSON or event-stream body.
func AnswerOf(b []byte) json.RawMessage {
	if json.Valid(b) {
		return b
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "data:")
		if !ok {
			continue
		}
		line = strings.TrimSpace(line)
		if strings.Contains(line, `"id"`) && (strings.Contains(line, `"result"`) || strings.Contains(line, `"error"`)) {
			return json.RawMessage(line)
		}
	}
	return nil
}

type taskIDParams struct {
	mcp.ParamsBase
	TaskID string `json:"taskId"`
}

type updateParams struct {
	mcp.ParamsBase
	TaskID         string         `json:"taskId"`
	InputResponses map[string]any `json:"inputResponses,omitempty"`
}

type rawResult struct {
	mcp.ResultBase
	raw map[string]any
}

func (r *rawResult) UnmarshalJSON(b []byte) error { return json.Unmarshal(b, &r.raw) }

var taskMethods = []string{"tasks/get", "tasks/result", "tasks/cancel", "tasks/list", "tasks/update"}

// Connect opens a client as o says and checks the negotiated version.
func Connect(t testing.TB, o Options) *Client {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "tasks-test", Version: "1"}, &mcp.ClientOptions{Capabilities: o.Caps, ElicitationHandler: o.Elicit})
	for _, m := range taskMethods {
		var err error
		if m == "tasks/update" {
			err = mcp.AddSendingCustomMethod[*updateParams, *rawResult](c, m)
		} else {
			err = mcp.AddSendingCustomMethod[*taskIDParams, *rawResult](c, m)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	rt := &rawTrip{o: &o}
	tr := &mcp.StreamableClientTransport{Endpoint: o.URL, HTTPClient: &http.Client{Transport: rt}, DisableStandaloneSSE: true, MaxRetries: -1}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: o.Version})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	if got := cs.InitializeResult().ProtocolVersion; got != o.Version {
		t.Fatalf("negotiated %s, want %s", got, o.Version)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return &Client{t: t, CS: cs, rt: rt}
}

// SetName turns Mcp-Name on the tasks methods on or off.
func (c *Client) SetName(on bool) { c.rt.o.NoName = !on }

// Start calls tool, with params.task when task is not "", and returns the
// raw answer's result or its JSON-RPC error.
func (c *Client) Start(tool string, args any, task string) (map[string]any, *jsonrpc.Error) {
	c.t.Helper()
	c.rt.mu.Lock()
	c.rt.task, c.rt.last = nil, nil
	if task != "" {
		c.rt.task = json.RawMessage(task)
	}
	c.rt.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, _ = c.CS.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	c.rt.mu.Lock()
	last := c.rt.last
	c.rt.mu.Unlock()
	var msg struct {
		Result map[string]any `json:"result"`
		Error  *jsonrpc.Error `json:"error"`
	}
	if err := json.Unmarshal(last, &msg); err != nil {
		c.t.Fatalf("%s: no JSON-RPC answer (%q)", tool, last)
	}
	return msg.Result, msg.Error
}

// Do sends a tasks method and returns its result or JSON-RPC error.
func (c *Client) Do(method, taskID string, inputs map[string]any) (map[string]any, *jsonrpc.Error) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var res *rawResult
	var err error
	if method == "tasks/update" {
		res, err = mcp.CallCustomMethod[*updateParams, *rawResult](ctx, c.CS, method, &updateParams{TaskID: taskID, InputResponses: inputs})
	} else {
		res, err = mcp.CallCustomMethod[*taskIDParams, *rawResult](ctx, c.CS, method, &taskIDParams{TaskID: taskID})
	}
	return c.answer(method, res, err)
}

// answer is a custom method's raw result, or its JSON-RPC error; any
// other error fails the test.
func (c *Client) answer(method string, res *rawResult, err error) (map[string]any, *jsonrpc.Error) {
	c.t.Helper()
	if err != nil {
		var je *jsonrpc.Error
		if errors.As(err, &je) {
			return nil, je
		}
		c.t.Fatalf("%s: %v", method, err)
	}
	return res.raw, nil
}

type listParams struct {
	mcp.ParamsBase
	Cursor string `json:"cursor,omitempty"`
}

// List sends one tasks/list from cursor and returns its result or
// JSON-RPC error.
func (c *Client) List(cursor string) (map[string]any, *jsonrpc.Error) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := mcp.CallCustomMethod[*listParams, *rawResult](ctx, c.CS, "tasks/list", &listParams{Cursor: cursor})
	return c.answer("tasks/list", res, err)
}

// Must is Do that fails the test on a JSON-RPC error.
func (c *Client) Must(method, taskID string) map[string]any {
	c.t.Helper()
	res, e := c.Do(method, taskID, nil)
	if e != nil {
		c.t.Fatalf("%s %s: error %d %q", method, taskID, e.Code, e.Message)
	}
	return res
}

// Structured is a tool result's structuredContent, checked against its text.
func Structured(t testing.TB, res map[string]any) map[string]any {
	t.Helper()
	sc, _ := res["structuredContent"].(map[string]any)
	content, _ := res["content"].([]any)
	if sc == nil || len(content) != 1 {
		t.Fatalf("result %v: want structuredContent and one text block", res)
	}
	var fromText map[string]any
	if err := json.Unmarshal([]byte(content[0].(map[string]any)["text"].(string)), &fromText); err != nil {
		t.Fatalf("text of %v is not JSON", res)
	}
	a, _ := json.Marshal(sc)
	b, _ := json.Marshal(fromText)
	if string(a) != string(b) {
		t.Fatalf("text %s differs from structuredContent %s", b, a)
	}
	return sc
}

// Text is a tool result's first text block.
func Text(res map[string]any) string {
	content, _ := res["content"].([]any)
	if len(content) == 0 {
		return ""
	}
	s, _ := content[0].(map[string]any)["text"].(string)
	return s
}

// WantCode fails t unless e is a JSON-RPC error with code whose message
// contains contains.
func WantCode(t testing.TB, what string, e *jsonrpc.Error, code int64, contains string) {
	t.Helper()
	if e == nil {
		t.Fatalf("%s: succeeded, want error %d", what, code)
	}
	if e.Code != code || !strings.Contains(e.Message, contains) {
		t.Fatalf("%s: error %d %q, want %d containing %q", what, e.Code, e.Message, code, contains)
	}
}

var tokenRE = regexp.MustCompile(`name="token" value="([^"]+)"`)

// Decide answers a request on its review page as a browser would: the
// decision ("submitted" or "declined"), a comment, the picked options.
func Decide(t testing.TB, reviewURL, decision, comment string, options ...string) {
	t.Helper()
	res, err := http.Get(reviewURL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	_ = res.Body.Close()
	m := tokenRE.FindSubmatch(body)
	if res.StatusCode != http.StatusOK || m == nil {
		t.Fatalf("GET review page: %d", res.StatusCode)
	}
	form := url.Values{"token": {html.UnescapeString(string(m[1]))}, "decision": {decision}, "option": options}
	if comment != "" {
		form.Set("comment", comment)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err = client.PostForm(reviewURL, form)
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	if res.StatusCode != http.StatusOK && res.StatusCode != http.StatusSeeOther {
		t.Fatalf("submit: %d", res.StatusCode)
	}
}

// Refused reports whether the review page refuses an answer now.
func Refused(t testing.TB, reviewURL string) bool {
	t.Helper()
	res, err := http.Get(reviewURL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	_ = res.Body.Close()
	return tokenRE.Find(body) == nil
}
