package mcptasks_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/boltstore"
	"github.com/mcp-elicitation/elicitation/internal/compose"
	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/mcptools"
	"github.com/mcp-elicitation/elicitation/internal/pagetoken"
	sealerpkg "github.com/mcp-elicitation/elicitation/internal/sealer"
	"github.com/mcp-elicitation/elicitation/internal/testclock"
)

// tokens are the test's bearer tokens and the principals they stand for.
var tokens = map[string]string{"tok-alice": "alice", "tok-bob": "bob"}

// world is the MCP endpoint under test: one or more processes' worth of
// servers (each its own store handle, Service and mcptools.Server) on one
// store file, requests alternating between them.
type world struct {
	t         testing.TB
	stateless bool
	maxWait   time.Duration
	waitShare int
	hostForm  bool
	onElicit  func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error)
	dbPath    string
	sealer    *sealerpkg.Keyring
	clock     *testclock.Clock // the processes' shared time

	mu      sync.Mutex
	svc     *elicitation.Service // the first instance's, to decide with
	servers []*httptest.Server
	closers []func()
	created map[string]string // elicitation id -> review URL
	next    atomic.Uint64
}

type worldOptions struct {
	stateless bool
	instances int
	maxWait   time.Duration
	waitShare int  // mcptools.Options.WaitsPerPrincipal; 0: the default
	hostForm  bool // mcptools.Options.HostForm
	// onElicit, if set, is every client's elicitation handler.
	onElicit func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error)
}

func newWorld(t testing.TB, o worldOptions) *world {
	t.Helper()
	k, err := sealerpkg.ParseKeyring("k0:" + pagetoken.GenerateSecret())
	if err != nil {
		t.Fatal(err)
	}
	w := &world{t: t, stateless: o.stateless, maxWait: o.maxWait, waitShare: o.waitShare, hostForm: o.hostForm, onElicit: o.onElicit, dbPath: filepath.Join(t.TempDir(), "store.db"), sealer: k, created: map[string]string{}, clock: testclock.New(time.Now().UTC())}
	if w.maxWait == 0 {
		w.maxWait = 5 * time.Second
	}
	w.start(max(o.instances, 1))
	t.Cleanup(w.stop)
	return w
}

func (w *world) start(n int) {
	w.t.Helper()
	for i := range n {
		st, err := boltstore.Open(w.dbPath)
		if err != nil {
			w.t.Fatal(err)
		}
		svc := elicitation.NewService(elicitation.Config{Store: st, MaxWait: w.maxWait, Now: w.clock.Now})
		if i == 0 {
			w.svc = svc
		}
		srv := mcptools.New(mcptools.Options{
			Service:   svc,
			Stateless: w.stateless,
			ReviewURL: func(r *http.Request, id, key string) string { return compose.ReviewURL("", r, id, key) },
			OnCreated: func(_ context.Context, id, u string) {
				w.mu.Lock()
				w.created[id] = u
				w.mu.Unlock()
			},
			Push: true, HostForm: w.hostForm, Sealer: w.sealer,
			WaitsPerPrincipal: w.waitShare,
			Name:              "elicitation-test", Version: "test",
		})
		h := auth.RequireBearerToken(func(_ context.Context, tok string, _ *http.Request) (*auth.TokenInfo, error) {
			if p, ok := tokens[tok]; ok {
				return &auth.TokenInfo{UserID: p, Expiration: time.Now().Add(time.Hour)}, nil
			}
			return nil, auth.ErrInvalidToken
		}, nil)(srv.Handler())
		ts := httptest.NewServer(h)
		w.servers = append(w.servers, ts)
		w.closers = append(w.closers, ts.Close, func() { _ = st.Close() })
	}
}

func (w *world) stop() {
	for _, c := range w.closers {
		c()
	}
	w.closers, w.servers = nil, nil
}

// restart stops every process and starts n fresh ones on the same store
// file: nothing survives but what the store holds.
func (w *world) restart(n int) {
	w.t.Helper()
	w.stop()
	w.start(n)
}

// decide answers a request as a reviewer on the review page would.
func (w *world) decide(id string, sub elicitation.Submission) {
	w.t.Helper()
	w.mu.Lock()
	u := w.created[id]
	w.mu.Unlock()
	pu, err := url.Parse(u)
	if err != nil || u == "" {
		w.t.Fatalf("no review URL for %s", id)
	}
	_, key := path.Split(pu.Path)
	if sub.ID == "" {
		sub.ID = "sub-" + id
	}
	if _, err := w.svc.Submit(context.Background(), id, key, sub); err != nil {
		w.t.Fatalf("decide %s: %v", id, err)
	}
}

// client is a go-sdk client that sends the tasks methods as custom
// methods and, through its transport, adds params.task to the tool calls
// it is told to (the go-sdk's CallToolParams has no task field), keeping
// the raw answer.
type client struct {
	t  testing.TB
	cs *mcp.ClientSession
	rt *rawTrip
}

type rawTrip struct {
	w     *world
	token string
	mu    sync.Mutex
	task  json.RawMessage // added to the next tools/call as params.task
	last  json.RawMessage // the JSON-RPC answer to that call
	pin   int             // >= 0: send every request to this server
	name  bool            // set Mcp-Name to params.taskId on tasks/* (2026-07-28)
}

func (rt *rawTrip) RoundTrip(r *http.Request) (*http.Response, error) {
	i := int(rt.w.next.Add(1) % uint64(len(rt.w.servers)))
	if rt.pin >= 0 {
		i = rt.pin
	}
	u, _ := url.Parse(rt.w.servers[i].URL)
	r = r.Clone(r.Context())
	r.URL.Host, r.Host = u.Host, u.Host
	r.Header.Set("Authorization", "Bearer "+rt.token)
	rt.mu.Lock()
	task := rt.task
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
			case strings.HasPrefix(m, `"tasks/`) && rt.name:
				var p struct {
					TaskID string `json:"taskId"`
				}
				_ = json.Unmarshal(msg["params"], &p)
				r.Header.Set("Mcp-Name", p.TaskID)
			}
		}
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(b)), int64(len(b))
	}
	res, err := http.DefaultTransport.RoundTrip(r)
	if err != nil || !isCall {
		return res, err
	}
	b, err := io.ReadAll(res.Body)
	_ = res.Body.Close()
	if err != nil {
		return nil, err
	}
	rt.mu.Lock()
	rt.task, rt.last = nil, answerOf(b)
	rt.mu.Unlock()
	res.Body = io.NopCloser(bytes.NewReader(b))
	return res, nil
}

// answerOf finds the JSON-RPC response in a JSON or event-stream body.
func answerOf(b []byte) json.RawMessage {
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

// connect opens a session (or, on 2026-07-28, a sessionless client) for
// token; pin >= 0 sends every request to that server.
func (w *world) connect(token, version string, pin int, caps *mcp.ClientCapabilities) *client {
	w.t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "tasks-test", Version: "1"}, &mcp.ClientOptions{Capabilities: caps, ElicitationHandler: w.onElicit})
	for _, m := range taskMethods {
		var err error
		if m == "tasks/update" {
			err = mcp.AddSendingCustomMethod[*updateParams, *rawResult](c, m)
		} else {
			err = mcp.AddSendingCustomMethod[*taskIDParams, *rawResult](c, m)
		}
		if err != nil {
			w.t.Fatal(err)
		}
	}
	rt := &rawTrip{w: w, token: token, pin: pin, name: version >= "2026-07-28"}
	tr := &mcp.StreamableClientTransport{
		Endpoint:             w.servers[0].URL + "/mcp",
		HTTPClient:           &http.Client{Transport: rt},
		DisableStandaloneSSE: true,
		MaxRetries:           -1,
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		w.t.Fatalf("connect: %v", err)
	}
	if got := cs.InitializeResult().ProtocolVersion; got != version {
		w.t.Fatalf("negotiated %s, want %s", got, version)
	}
	w.t.Cleanup(func() { _ = cs.Close() })
	return &client{t: w.t, cs: cs, rt: rt}
}

// startTask calls tool with params.task and returns the raw JSON-RPC
// answer's result, or its error.
func (c *client) startTask(tool string, args any, task string) (map[string]any, *jsonrpc.Error) {
	c.t.Helper()
	c.rt.mu.Lock()
	c.rt.task = nil
	if task != "" {
		c.rt.task = json.RawMessage(task)
	}
	c.rt.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, _ = c.cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	c.rt.mu.Lock()
	last := c.rt.last
	c.rt.last = nil
	c.rt.mu.Unlock()
	var msg struct {
		Result map[string]any  `json:"result"`
		Error  *jsonrpc.Error  `json:"error"`
		ID     json.RawMessage `json:"id"`
	}
	if err := json.Unmarshal(last, &msg); err != nil {
		c.t.Fatalf("%s as a task: no JSON-RPC answer (%q)", tool, last)
	}
	return msg.Result, msg.Error
}

// do sends a tasks method and returns its result or JSON-RPC error.
func (c *client) do(method, taskID string, inputs map[string]any) (map[string]any, *jsonrpc.Error) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var res *rawResult
	var err error
	if method == "tasks/update" {
		res, err = mcp.CallCustomMethod[*updateParams, *rawResult](ctx, c.cs, method, &updateParams{TaskID: taskID, InputResponses: inputs})
	} else {
		res, err = mcp.CallCustomMethod[*taskIDParams, *rawResult](ctx, c.cs, method, &taskIDParams{TaskID: taskID})
	}
	if err != nil {
		var je *jsonrpc.Error
		if errors.As(err, &je) {
			return nil, je
		}
		c.t.Fatalf("%s: %v", method, err)
	}
	return res.raw, nil
}

func (c *client) must(method, taskID string) map[string]any {
	c.t.Helper()
	res, e := c.do(method, taskID, nil)
	if e != nil {
		c.t.Fatalf("%s %s: error %d %q", method, taskID, e.Code, e.Message)
	}
	return res
}

// structured is a tool result's structuredContent, checked against its text.
func structured(t testing.TB, res map[string]any) map[string]any {
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

func wantCode(t testing.TB, what string, e *jsonrpc.Error, code int64, contains string) {
	t.Helper()
	if e == nil {
		t.Fatalf("%s: succeeded, want error %d", what, code)
	}
	if e.Code != code || !strings.Contains(e.Message, contains) {
		t.Fatalf("%s: error %d %q, want %d containing %q", what, e.Code, e.Message, code, contains)
	}
}
