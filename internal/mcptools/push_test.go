package mcptools_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/mcptools"
	"github.com/mcp-elicitation/elicitation/internal/mcptools/pushtest"
)

// connectURL opens a 2026-07-28 session that declares URL elicitation and
// declines every push (counted in pushes).
func connectURL(t *testing.T, e *env, token string, pushes chan<- *mcp.ElicitParams) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "url-host", Version: "1"}, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}},
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			pushes <- req.Params
			return &mcp.ElicitResult{Action: "decline"}, nil
		},
	})
	tr := &mcp.StreamableClientTransport{Endpoint: e.servers[0].URL + "/mcp", HTTPClient: &http.Client{Transport: roundTrip{e: e, token: token}}, MaxRetries: -1}
	cs, err := client.Connect(context.Background(), tr, &mcp.ClientSessionOptions{ProtocolVersion: proto20260728})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// TestSessionlessPushState: a request state is bound to its elicitation,
// its principal and a short expiry, across two stateless instances that
// share only the store and the keys.
func TestSessionlessPushState(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{stateless: true, instances: 2, push: true, auth: map[string]string{"ta": "alice", "tb": "bob"}})
	pushes := make(chan *mcp.ElicitParams, 8)
	alice, bob := connectURL(t, e, "ta", pushes), connectURL(t, e, "tb", pushes)
	created := call(t, alice, mcptools.ToolApproval, map[string]any{"message": "m", "context": 1}).structured
	id := created["elicitationId"].(string)
	other := call(t, alice, mcptools.ToolApproval, map[string]any{"message": "n", "context": 2}).structured["elicitationId"].(string)

	if r := call(t, alice, mcptools.ToolAwait, map[string]any{"elicitationId": id, "waitSeconds": 0.2}); r.structured["status"] != "pending" {
		t.Fatalf("first await: %+v", r)
	}
	select {
	case p := <-pushes:
		if p.Mode != "url" || p.URL != created["reviewUrl"] || p.ElicitationID != id {
			t.Fatalf("push %+v", p)
		}
	default:
		t.Fatal("no push")
	}
	e.mu.Lock()
	state := e.lastState
	e.mu.Unlock()

	refused := func(who *mcp.ClientSession, id, state, want string) {
		t.Helper()
		_, err := who.CallTool(context.Background(), &mcp.CallToolParams{Name: mcptools.ToolAwait, Arguments: map[string]any{"elicitationId": id, "waitSeconds": 0.1}, RequestState: state})
		var je *jsonrpc.Error
		if !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams || !strings.Contains(je.Message, want) {
			t.Errorf("request state for %s: %v, want a -32602 error saying %q", id, err, want)
		}
	}
	refused(bob, id, state, "belongs to another request or another agent")
	refused(alice, other, state, "belongs to another request or another agent")
	refused(alice, id, state, "was already used")
	refused(alice, id, state+"A", "is not one this server issued")

	// A fresh state expires five minutes after it was issued.
	if r := call(t, alice, mcptools.ToolAwait, map[string]any{"elicitationId": other, "waitSeconds": 0.1}); r.structured["status"] != "pending" {
		t.Fatalf("await: %+v", r)
	}
	<-pushes
	e.mu.Lock()
	fresh := e.lastState
	e.mu.Unlock()
	e.clock.Add(mcptools.StateTTL)
	refused(alice, other, fresh, "has expired")

	// Bob's host was never offered alice's requests, and alice's only once
	// each.
	tr, err := e.svc.OperatorAudit(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	var n int
	for _, en := range tr.Entries {
		if en.Action == elicitation.ActionPushed {
			n++
		}
	}
	if n != 1 || len(pushes) != 0 {
		t.Errorf("%d pushes recorded, %d more delivered; want 1 and 0", n, len(pushes))
	}
}

func text(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, " ")
}

// ListenRequest is a 2026-07-28 subscriptions/listen request, as a go-sdk
// client sends it when a server advertises listChanged.
const ListenRequest = `{"jsonrpc":"2.0","id":7,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true,"promptsListChanged":true},"_meta":{"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"x","version":"1"},"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`

// TestNoListenStream: nothing on this server changes, so listChanged is
// false (no 2026-07-28 client opens a listen stream), and a listen request
// sent anyway is answered and ended at once, on the default and on the
// stateless (Lambda) handler, instead of being held open.
func TestNoListenStream(t *testing.T) {
	t.Parallel()
	for _, stateless := range []bool{false, true} {
		e := newEnv(t, envOptions{stateless: stateless})
		cs := e.connect(t, proto20260728, "")
		caps := cs.InitializeResult().Capabilities
		if caps.Tools == nil || caps.Tools.ListChanged || caps.Prompts != nil && caps.Prompts.ListChanged {
			t.Errorf("stateless=%v: capabilities advertise listChanged: tools %+v prompts %+v", stateless, caps.Tools, caps.Prompts)
		}
		req, _ := http.NewRequest(http.MethodPost, e.servers[0].URL+"/mcp", strings.NewReader(ListenRequest))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", proto20260728)
		req.Header.Set("Mcp-Method", "subscriptions/listen")
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		res, err := http.DefaultClient.Do(req.WithContext(ctx))
		if err != nil {
			cancel()
			t.Fatalf("stateless=%v: %v", stateless, err)
		}
		body, err := io.ReadAll(res.Body)
		res.Body.Close()
		cancel()
		// The SDK acknowledges no subscription and completes the request:
		// the stream ends at once.
		if err != nil || !strings.Contains(string(body), `"notifications":{}`) || !strings.Contains(string(body), `"id":7,"result":{"resultType":"complete"`) {
			t.Errorf("stateless=%v: listen answered %d %q (%v), want it acknowledged with no subscription and complete at once", stateless, res.StatusCode, body, err)
		}
	}
}

// TestSessionlessPushStateRacingRetries: retries racing with one request
// state, over two stateless instances, are accepted exactly once; the
// others, and the host's own late retry, are refused as already used.
func TestSessionlessPushStateRacingRetries(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{stateless: true, instances: 2, push: true, auth: map[string]string{"ta": "alice"}})
	pushed, release := make(chan struct{}, 1), make(chan struct{})
	client := mcp.NewClient(&mcp.Implementation{Name: "slow-url-host", Version: "1"}, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}},
		ElicitationHandler: func(ctx context.Context, _ *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			pushed <- struct{}{}
			select { // hold the host's retry until the racers are done
			case <-release:
			case <-ctx.Done():
			}
			return &mcp.ElicitResult{Action: "cancel"}, nil
		},
	})
	tr := &mcp.StreamableClientTransport{Endpoint: e.servers[0].URL + "/mcp", HTTPClient: &http.Client{Transport: roundTrip{e: e, token: "ta"}}, MaxRetries: -1}
	host, err := client.Connect(context.Background(), tr, &mcp.ClientSessionOptions{ProtocolVersion: proto20260728})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = host.Close() })
	racer := e.connect(t, proto20260728, "ta")
	id := call(t, racer, mcptools.ToolApproval, map[string]any{"message": "m", "context": 1}).structured["elicitationId"].(string)

	hostDone := make(chan error, 1)
	go func() {
		_, err := host.CallTool(context.Background(), &mcp.CallToolParams{Name: mcptools.ToolAwait, Arguments: map[string]any{"elicitationId": id, "waitSeconds": 0.2}})
		hostDone <- err
	}()
	select {
	case <-pushed:
	case <-time.After(30 * time.Second):
		t.Fatal("no push")
	}
	e.mu.Lock()
	state := e.lastState
	e.mu.Unlock()

	const n = 10
	results := make(chan *mcp.CallToolResult, n)
	errs := make(chan error, n)
	start := make(chan struct{})
	for range n {
		go func() {
			<-start
			res, err := racer.CallTool(context.Background(), &mcp.CallToolParams{Name: mcptools.ToolAwait, Arguments: map[string]any{"elicitationId": id, "waitSeconds": 0.1}, RequestState: state})
			if err != nil {
				errs <- err
				return
			}
			results <- res
		}()
	}
	close(start)
	accepted, used := 0, 0
	for range n {
		select {
		case err := <-errs:
			var je *jsonrpc.Error
			if !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams || !strings.Contains(je.Message, "was already used") {
				t.Errorf("racer: %v, want a -32602 error saying it was already used", err)
			}
			used++
		case res := <-results:
			if res.IsError {
				t.Errorf("racer got %q", text(res))
			}
			accepted++
		}
	}
	if accepted != 1 || used != n-1 {
		t.Errorf("%d racers accepted, %d refused as already used; want 1 and %d", accepted, used, n-1)
	}
	close(release)
	<-hostDone // the host's own retry comes too late: refused

	tr2, err := e.svc.OperatorAudit(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	counts := map[elicitation.Action]int{}
	for _, en := range tr2.Entries {
		counts[en.Action]++
	}
	if counts[elicitation.ActionPushed] != 1 || counts[elicitation.ActionPushAnswered] != 1 {
		t.Errorf("audit counts %v; want one push and one answered state", counts)
	}
}

// TestSessionPushCompletes runs the push scenario on a session that
// declared URL elicitation, with every decision made through another
// instance of the service (its own store handle and Service, as a second
// process on the same data would): the complete notice is woken by the
// store, not by the process that pushed.
func TestSessionPushCompletes(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{push: true, instances: 2})
	other := e.svcs[1]
	tg := pushtest.Target{MCPURL: e.servers[0].URL + "/mcp", Sessions: true,
		Decide: func(t *testing.T, reviewURL, decision string) {
			u, err := url.Parse(reviewURL)
			if err != nil {
				t.Fatal(err)
			}
			id, key := path.Split(u.Path)
			id = path.Base(id)
			if _, err := other.Submit(context.Background(), id, key, elicitation.Submission{ID: "elsewhere", Decision: elicitation.Decision(decision)}); err != nil {
				t.Fatalf("decide %s elsewhere: %v", id, err)
			}
		}}
	pushtest.RunOne(t, tg, proto20251125, true)
}

// TestSessionPushWatchesTheStore: a session push's complete notice waits
// on the store's own wake-up (Store.Wait, as elicit_await does), not on a
// poller reading the request's state: with no elicit_await called, the
// push's watch is seen waiting in the store for the request, and the
// decision ends it with the complete notice.
func TestSessionPushWatchesTheStore(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{push: true})
	pushes, completes := make(chan string, 1), make(chan string, 1)
	client := mcp.NewClient(&mcp.Implementation{Name: "url-host", Version: "1"}, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}},
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			pushes <- req.Params.ElicitationID
			return &mcp.ElicitResult{Action: "accept"}, nil
		},
		ElicitationCompleteHandler: func(_ context.Context, req *mcp.ElicitationCompleteNotificationRequest) {
			completes <- req.Params.ElicitationID
		},
	})
	tr := &mcp.StreamableClientTransport{Endpoint: e.servers[0].URL + "/mcp", HTTPClient: &http.Client{Transport: roundTrip{e: e}}, MaxRetries: -1}
	cs, err := client.Connect(context.Background(), tr, &mcp.ClientSessionOptions{ProtocolVersion: proto20251125})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	e.store.Forget()
	c := ok(t, cs, mcptools.ToolApproval, map[string]any{"message": "m", "context": 1})
	id := c["elicitationId"].(string)
	if got := receiveString(t, pushes, "the push"); got != id {
		t.Fatalf("pushed %s, created %s", got, id)
	}
	if got := receiveString(t, e.store.Waiting, "the push's watch waiting in the store"); got != id {
		t.Fatalf("a wait in the store for %s, created %s", got, id)
	}
	e.decide(t, c, elicitation.Submission{Decision: elicitation.DecisionSubmitted})
	if got := receiveString(t, completes, "the complete notice"); got != id {
		t.Errorf("complete notice for %s, created %s", got, id)
	}
}

// receiveString takes one value from ch; the 10 s is only a failure bound.
func receiveString(t *testing.T, ch <-chan string, what string) string {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("%s never came", what)
		return ""
	}
}

// TestSessionlessLinkAnswerMalformed: on 2026-07-28 a retry of
// elicit_await whose answer to the offered review link is none (an action
// other than accept, decline or cancel, or not an elicitation's answer) is
// refused as an invalid argument naming inputResponses, records nothing and
// leaves the request state usable: the same state with a real answer then
// continues the wait.
func TestSessionlessLinkAnswerMalformed(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{stateless: true, push: true, auth: map[string]string{"ta": "alice"}})
	client := mcp.NewClient(&mcp.Implementation{Name: "manual-url-host", Version: "1"}, &mcp.ClientOptions{
		Capabilities:   &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}},
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
	})
	tr := &mcp.StreamableClientTransport{Endpoint: e.servers[0].URL + "/mcp", HTTPClient: &http.Client{Transport: roundTrip{e: e, token: "ta"}}, MaxRetries: -1, DisableStandaloneSSE: true}
	cs, err := client.Connect(context.Background(), tr, &mcp.ClientSessionOptions{ProtocolVersion: proto20260728})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	id := call(t, cs, mcptools.ToolApproval, map[string]any{"message": "m", "context": 1}).structured["elicitationId"].(string)
	await := func(state string, inputs mcp.InputResponseMap) *mcp.CallToolResult {
		t.Helper()
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: mcptools.ToolAwait,
			Arguments: map[string]any{"elicitationId": id, "waitSeconds": 0.1}, RequestState: state, InputResponses: inputs})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	first := await("", nil)
	if p, ok := first.InputRequests["review"].(*mcp.ElicitParams); !ok || p.Mode != "url" || first.RequestState == "" {
		t.Fatalf("first await: %+v, want the review link offered", first)
	}
	for name, answer := range map[string]mcp.InputResponse{
		"unknown action": &mcp.ElicitResult{Action: "approve"},
		"empty action":   &mcp.ElicitResult{},
		//lint:ignore SA1019 a sampling result is what a host could send in the link's place
		"not an answer": &mcp.CreateMessageResult{Role: "assistant", Content: &mcp.TextContent{Text: "x"}, Model: "m"},
	} {
		res := await(first.RequestState, mcp.InputResponseMap{"review": answer})
		if got := text(res); !res.IsError || !strings.HasPrefix(got, "invalid_argument: ") || !strings.Contains(got, "inputResponses.review") {
			t.Errorf("%s: %q, want an invalid_argument error naming inputResponses.review", name, got)
		}
	}
	tr2, err := e.svc.OperatorAudit(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	for _, en := range tr2.Entries {
		if en.Action == elicitation.ActionPushAnswered {
			t.Fatalf("a malformed answer was recorded: %+v", en)
		}
	}
	if st := call(t, cs, mcptools.ToolStatus, map[string]any{"elicitationId": id}).structured; st["status"] != "pending" {
		t.Fatalf("status after malformed answers: %v", st)
	}
	if res := await(first.RequestState, mcp.InputResponseMap{"review": &mcp.ElicitResult{Action: "cancel"}}); res.IsError || !strings.Contains(text(res), `"pending"`) {
		t.Fatalf("the same state with a real answer: %q", text(res))
	}
}
