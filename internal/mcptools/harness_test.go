package mcptools_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
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

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/boltstore"
	"github.com/mcp-elicitation/elicitation/internal/compose"
	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/elicitation/storetest"
	"github.com/mcp-elicitation/elicitation/internal/mcptools"
	"github.com/mcp-elicitation/elicitation/internal/pagetoken"
	sealerpkg "github.com/mcp-elicitation/elicitation/internal/sealer"
	"github.com/mcp-elicitation/elicitation/internal/testclock"
)

// The two protocol eras the stateless path must serve.
const (
	proto20260728 = "2026-07-28"
	proto20251125 = "2025-11-25"
)

// newClock is the shared test clock (testclock) at this package's start.
func newClock() *testclock.Clock { return testclock.New(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)) }

// env is a running MCP endpoint: one stateful handler, or stateless
// handler instances that share only the store file (each has its own
// store handle and Service), with requests alternating between them.
type env struct {
	clock   *testclock.Clock
	svc     *elicitation.Service   // decides requests, as the review endpoint would
	svcs    []*elicitation.Service // each instance's, svcs[0] == svc
	store   *storetest.WaitSignal
	servers []*httptest.Server
	tools   []*mcptools.Server // servers[i] serves tools[i]
	next    atomic.Uint64      // alternates requests between servers

	mu        sync.Mutex
	created   map[string]string // id -> review URL, from OnCreated
	lastState string            // the last requestState a server sent

	// inFlight counts the requests the servers are still handling, past
	// the response a client may already have read (settle).
	inFlight int
	idle     *sync.Cond // on mu, when inFlight falls to 0
}

// settle waits until the servers have finished every request, deferred
// bookkeeping included: a client reads its response before the handler
// that wrote it returns, and what runs then (a session's last use, its
// POSTs in flight) decides which session is the idlest.
func (e *env) settle() {
	e.mu.Lock()
	defer e.mu.Unlock()
	for e.inFlight > 0 {
		e.idle.Wait()
	}
}

// counted is h, counting its requests in e.inFlight.
func (e *env) counted(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.mu.Lock()
		e.inFlight++
		e.mu.Unlock()
		defer func() {
			e.mu.Lock()
			if e.inFlight--; e.inFlight == 0 {
				e.idle.Broadcast()
			}
			e.mu.Unlock()
		}()
		h.ServeHTTP(w, r)
	})
}

type envOptions struct {
	stateless bool
	instances int               // stateless handler instances; default 1
	auth      map[string]string // bearer token -> principal; nil: no credentials
	// persons are bearer tokens of people signed in with OAuth (as
	// internal/compose/mcpendpoint's: TokenInfo.Extra[PersonKey]).
	persons map[string]elicitation.Identity
	// wrapStore, if set, wraps each instance's store (faults).
	wrapStore func(elicitation.Store) elicitation.Store
	maxWait   time.Duration
	signIn    bool // reviewers sign in (elicitation.Config.SignIn)
	push      bool // push, with push-state keys shared by the instances
	hostForm  bool // host form (Options.HostForm), with the same keys
	app       bool // the MCP App's tools (Options.App), with the same keys
	// Session and body limits (mcptools.Options); zero: the defaults.
	sessionIdle time.Duration
	maxSessions int
	maxBody     int64
	share       int // SessionsPerPrincipal
	// elicit_await caps (MaxWaits, WaitsPerPrincipal); zero: the defaults.
	maxWaits, waitShare int
	// log, if set, is the servers' Logger.
	log *slog.Logger
	// arrived, if set, is called as each HTTP request reaches the tools'
	// handler (after the bearer-token check).
	arrived func(*http.Request)
}

func newEnv(t testing.TB, o envOptions) *env {
	t.Helper()
	e := &env{clock: newClock(), created: map[string]string{}}
	e.idle = sync.NewCond(&e.mu)
	var sealer mcptools.Sealer
	if o.push || o.hostForm || o.app {
		k, err := sealerpkg.ParseKeyring("k0:" + pagetoken.GenerateSecret())
		if err != nil {
			t.Fatal(err)
		}
		sealer = k
	}
	dbPath := filepath.Join(t.TempDir(), "store.db")
	n := max(o.instances, 1)
	for i := range n {
		st, err := boltstore.Open(dbPath)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		var inner elicitation.Store = st
		if o.wrapStore != nil {
			inner = o.wrapStore(st)
		}
		ws := storetest.NewWaitSignal(inner, 1)
		svc := elicitation.NewService(elicitation.Config{Store: ws, Now: e.clock.Now, MaxWait: o.maxWait, SignIn: o.signIn})
		e.svcs = append(e.svcs, svc)
		if i == 0 {
			e.svc, e.store = svc, ws
		} else {
			// Waiters may be on any instance: signal through the first.
			ws.Waiting = e.store.Waiting
		}
		srv := mcptools.New(mcptools.Options{
			Service:   svc,
			Stateless: o.stateless,
			ReviewURL: reviewURL,
			OnCreated: func(_ context.Context, id, u string) {
				e.mu.Lock()
				e.created[id] = u
				e.mu.Unlock()
			},
			Name: "elicitation-test", Version: "test",
			Push: o.push, HostForm: o.hostForm, App: o.app, Sealer: sealer,
			SessionIdle: o.sessionIdle, MaxSessions: o.maxSessions, MaxBodyBytes: o.maxBody,
			SessionsPerPrincipal: o.share,
			MaxWaits:             o.maxWaits, WaitsPerPrincipal: o.waitShare,
			Logger: o.log,
		})
		e.tools = append(e.tools, srv)
		var h http.Handler = srv.Handler()
		if o.arrived != nil {
			inner := h
			h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				o.arrived(r)
				inner.ServeHTTP(w, r)
			})
		}
		if o.auth != nil || o.persons != nil {
			h = auth.RequireBearerToken(func(_ context.Context, tok string, _ *http.Request) (*auth.TokenInfo, error) {
				if p, ok := o.auth[tok]; ok {
					return &auth.TokenInfo{UserID: p, Expiration: time.Now().Add(time.Hour)}, nil
				}
				if id, ok := o.persons[tok]; ok {
					return &auth.TokenInfo{UserID: id.Principal(), Expiration: time.Now().Add(time.Hour), Extra: map[string]any{mcptools.PersonKey: id}}, nil
				}
				return nil, auth.ErrInvalidToken
			}, nil)(h)
		}
		ts := httptest.NewServer(e.counted(h))
		t.Cleanup(ts.Close)
		e.servers = append(e.servers, ts)
	}
	return e
}

// roundTrip sends each request to the next server in turn, with an
// optional bearer token.
type roundTrip struct {
	e     *env
	token string
}

func (rt roundTrip) RoundTrip(r *http.Request) (*http.Response, error) {
	srv := rt.e.servers[rt.e.next.Add(1)%uint64(len(rt.e.servers))]
	u, _ := url.Parse(srv.URL)
	r = r.Clone(r.Context())
	r.URL.Host, r.Host = u.Host, u.Host
	if rt.token != "" {
		r.Header.Set("Authorization", "Bearer "+rt.token)
	}
	res, err := http.DefaultTransport.RoundTrip(r)
	if err != nil || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
		return res, err
	}
	b, err := io.ReadAll(res.Body)
	_ = res.Body.Close()
	var msg struct {
		Result struct {
			RequestState string `json:"requestState"`
		} `json:"result"`
	}
	if json.Unmarshal(b, &msg) == nil && msg.Result.RequestState != "" {
		rt.e.mu.Lock()
		rt.e.lastState = msg.Result.RequestState
		rt.e.mu.Unlock()
	}
	res.Body = io.NopCloser(bytes.NewReader(b))
	return res, err
}

// connect opens a go-sdk client session over streamable HTTP at protocol
// version (empty: the client's latest).
func (e *env) connect(t testing.TB, version, token string) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "mcptools-test", Version: "1"}, nil)
	tr := &mcp.StreamableClientTransport{
		Endpoint:             e.servers[0].URL + "/mcp",
		HTTPClient:           &http.Client{Transport: roundTrip{e: e, token: token}},
		DisableStandaloneSSE: true,
		MaxRetries:           -1,
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect (protocol %q): %v", version, err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// callResult is one tool call's outcome as a client sees it.
type callResult struct {
	isError    bool
	text       string
	structured map[string]any
}

func call(t testing.TB, cs *mcp.ClientSession, name string, args any) callResult {
	t.Helper()
	r, err := callE(cs, name, args)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// callE calls a tool and checks the shape of its result: one text block;
// on success, structured content equal to the text's JSON; on error, no
// structured content.
func callE(cs *mcp.ClientSession, name string, args any) (callResult, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return callResult{}, fmt.Errorf("%s: protocol error: %w", name, err)
	}
	r := callResult{isError: res.IsError}
	if len(res.Content) != 1 {
		return r, fmt.Errorf("%s: %d content blocks, want 1", name, len(res.Content))
	}
	tc, isText := res.Content[0].(*mcp.TextContent)
	if !isText {
		return r, fmt.Errorf("%s: content is %T, want text", name, res.Content[0])
	}
	r.text = tc.Text
	if res.IsError {
		if res.StructuredContent != nil {
			return r, fmt.Errorf("%s: error result with structured content %v", name, res.StructuredContent)
		}
		return r, nil
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		return r, err
	}
	if err := json.Unmarshal(b, &r.structured); err != nil {
		return r, fmt.Errorf("%s: structured content %s: %w", name, b, err)
	}
	var fromText map[string]any
	if err := json.Unmarshal([]byte(tc.Text), &fromText); err != nil {
		return r, fmt.Errorf("%s: text is not JSON: %q", name, tc.Text)
	}
	if !jsonEqual(fromText, r.structured) {
		return r, fmt.Errorf("%s: text %s differs from structured content %s", name, tc.Text, b)
	}
	// The structured content satisfies the tool's declared output schema.
	schemas, err := outputSchemas(cs)
	if err != nil {
		return r, err
	}
	var inst any
	_ = json.Unmarshal(b, &inst)
	if err := schemas[name].Validate(inst); err != nil {
		return r, fmt.Errorf("%s: output %s does not satisfy the output schema: %w", name, b, err)
	}
	return r, nil
}

var resolvedOutputs sync.Map // *mcp.ClientSession -> map[string]*jsonschema.Resolved

// outputSchemas resolves the output schemas the session's server declares.
func outputSchemas(cs *mcp.ClientSession) (map[string]*jsonschema.Resolved, error) {
	if m, ok := resolvedOutputs.Load(cs); ok {
		return m.(map[string]*jsonschema.Resolved), nil
	}
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		return nil, err
	}
	m := map[string]*jsonschema.Resolved{}
	for _, tool := range res.Tools {
		b, _ := json.Marshal(tool.OutputSchema)
		var s jsonschema.Schema
		if err := json.Unmarshal(b, &s); err != nil {
			return nil, fmt.Errorf("%s: output schema: %w", tool.Name, err)
		}
		if m[tool.Name], err = s.Resolve(nil); err != nil {
			return nil, fmt.Errorf("%s: output schema: %w", tool.Name, err)
		}
	}
	resolvedOutputs.Store(cs, m)
	return m, nil
}

// ok calls a tool that must succeed and returns its structured content.
func ok(t testing.TB, cs *mcp.ClientSession, name string, args any) map[string]any {
	t.Helper()
	r := call(t, cs, name, args)
	if r.isError {
		t.Fatalf("%s(%v): tool error %q", name, args, r.text)
	}
	return r.structured
}

// fails calls a tool that must fail with code and returns the error text.
func fails(t testing.TB, cs *mcp.ClientSession, name string, args any, code elicitation.Code) string {
	t.Helper()
	r := call(t, cs, name, args)
	if !r.isError {
		t.Fatalf("%s(%v): succeeded with %v, want %s error", name, args, r.structured, code)
	}
	if !strings.HasPrefix(r.text, string(code)+": ") {
		t.Fatalf("%s: error %q, want it to start with %q", name, r.text, code+": ")
	}
	return r.text
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// reviewKey extracts the review key from a review URL /review/{id}/{key}.
func reviewKey(t testing.TB, id, reviewURL string) string {
	t.Helper()
	u, err := url.Parse(reviewURL)
	if err != nil {
		t.Fatalf("reviewUrl %q: %v", reviewURL, err)
	}
	dir, key := path.Split(u.Path)
	if dir != "/review/"+id+"/" || key == "" {
		t.Fatalf("reviewUrl %q is not /review/%s/{key}", reviewURL, id)
	}
	return key
}

// decide lands a reviewer's submission through the Service, as the review
// page's submit endpoint does.
func (e *env) decide(t testing.TB, created map[string]any, sub elicitation.Submission) {
	t.Helper()
	id := created["elicitationId"].(string)
	key := reviewKey(t, id, created["reviewUrl"].(string))
	if sub.ID == "" {
		sub.ID = "sub-" + id
	}
	if _, err := e.svc.Submit(context.Background(), id, key, sub); err != nil {
		t.Fatalf("submit %s: %v", id, err)
	}
}

// awaitAsync starts an elicit_await and returns once it waits in the store.
func (e *env) awaitAsync(t testing.TB, cs *mcp.ClientSession, args map[string]any) <-chan callResult {
	t.Helper()
	e.store.Forget()
	out := make(chan callResult, 1)
	go func() {
		r, err := callE(cs, mcptools.ToolAwait, args)
		if err != nil {
			r = callResult{isError: true, text: "harness: " + err.Error()}
		}
		out <- r
	}()
	select {
	case <-e.store.Waiting:
	case r := <-out:
		t.Fatalf("elicit_await returned %v %q before anything happened", r.structured, r.text)
	case <-time.After(10 * time.Second):
		t.Fatal("elicit_await never started waiting")
	}
	return out
}

// receive returns the outcome of an awaitAsync, failing the test if none
// comes within d.
func receive(t testing.TB, ch <-chan callResult, d time.Duration) callResult {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(d):
		t.Fatalf("elicit_await did not return within %s", d)
		return callResult{}
	}
}

// reviewURL is the deployments' review URL builder without a public base:
// from the request's Host.
func reviewURL(r *http.Request, id, key string) string { return compose.ReviewURL("", r, id, key) }

// resumeStream asks a 2025-11-25 session's endpoint to resume a stream
// after lastEventID (GET with Last-Event-ID) and returns the status and
// the body.
func resumeStream(ctx context.Context, t testing.TB, url, sid, lastEventID string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("Mcp-Protocol-Version", proto20251125)
	req.Header.Set("Last-Event-ID", lastEventID)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, string(b)
}

// pendingApproval creates a pending approval request of the anonymous
// principal through svc.
func pendingApproval(t testing.TB, svc *elicitation.Service) elicitation.Created {
	t.Helper()
	c, err := svc.Create(context.Background(), elicitation.Anonymous, elicitation.KindApproval, elicitation.Input{Message: "m", Context: json.RawMessage(`1`)})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
