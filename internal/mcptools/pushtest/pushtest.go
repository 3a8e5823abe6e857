// Package pushtest is the one scenario every deployment of the MCP tools
// passes with the go-sdk client, on each protocol era, with and without
// URL elicitation declared (docs/protocol.md): the tool results are the
// same everywhere, the review link is pushed where the era and the
// deployment allow (on the session, or in an input-required result), the
// complete notice follows a decision, a host that ignores or declines the
// push still completes through reviewUrl, and tampered or replayed request
// state is refused.
package pushtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/mcptools/tasktest"
)

// Eras are the protocol versions a deployment serves on one endpoint.
var Eras = []string{"2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"}

// Target is a deployment under test.
type Target struct {
	// MCPURL is its MCP endpoint.
	MCPURL string
	// Header is added to every MCP request (an API key).
	Header http.Header
	// Sessions: the session eras get sessions (the local default server);
	// false: every era is served statelessly (--stateless, Lambda).
	Sessions bool
	// SessionlessPush: 2026-07-28 clients that declare URL elicitation
	// get the input-required push (push-state keys are configured).
	SessionlessPush bool
	// Decide, if set, answers a request in place of its review page (see
	// Target.decide); nil: the review page, as a browser would.
	Decide func(t *testing.T, reviewURL, decision string)
}

// Want is what a client of era, declaring URL elicitation or not, sees.
type Want struct {
	SessionPush, InputPush bool
}

// Expect is the table of docs/protocol.md: what each era sees on t.
func (t Target) Expect(era string, url bool) Want {
	switch {
	case !url:
		return Want{}
	case era >= "2026-07-28":
		return Want{InputPush: t.SessionlessPush}
	case era >= "2025-11-25":
		return Want{SessionPush: t.Sessions}
	}
	return Want{}
}

// Run runs the scenario for every era, with and without URL elicitation.
func Run(t *testing.T, tg Target) {
	for _, era := range Eras {
		for _, url := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/url=%v", era, url), func(t *testing.T) { RunOne(t, tg, era, url) })
		}
	}
}

// host is a client and what reached it.
type host struct {
	cs        *mcp.ClientSession
	elicits   chan *mcp.ElicitParams
	completes chan string
	states    *stateTap
}

// stateTap keeps the last requestState the server sent.
type stateTap struct {
	mu   sync.Mutex
	last string
	base http.RoundTripper
	hdr  http.Header
}

var stateRE = regexp.MustCompile(`"requestState"\s*:\s*"([^"]+)"`)

func (s *stateTap) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range s.hdr {
		r.Header[k] = v
	}
	res, err := s.base.RoundTrip(r)
	if err != nil || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
		return res, err
	}
	b, err := io.ReadAll(res.Body)
	_ = res.Body.Close()
	if m := stateRE.FindSubmatch(b); m != nil {
		s.mu.Lock()
		s.last = string(m[1])
		s.mu.Unlock()
	}
	res.Body = io.NopCloser(bytes.NewReader(b))
	return res, err
}

func (s *stateTap) Last() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last
}

// connect starts a host of era; with url it declares URL elicitation and
// answers every push with answer ("" ignores it: never answers until the
// test ends).
func connect(t *testing.T, tg Target, era string, url bool, answer string) *host {
	t.Helper()
	h := &host{elicits: make(chan *mcp.ElicitParams, 4), completes: make(chan string, 4)}
	release := make(chan struct{})
	opts := &mcp.ClientOptions{}
	if url {
		opts.Capabilities = &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}}}
		opts.ElicitationHandler = func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			h.elicits <- req.Params
			if answer == "" {
				select {
				case <-release:
				case <-ctx.Done():
				}
				return &mcp.ElicitResult{Action: "cancel"}, nil
			}
			return &mcp.ElicitResult{Action: answer}, nil
		}
		opts.ElicitationCompleteHandler = func(_ context.Context, req *mcp.ElicitationCompleteNotificationRequest) {
			h.completes <- req.Params.ElicitationID
		}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "pushtest", Version: "1"}, opts)
	h.states = &stateTap{base: http.DefaultTransport, hdr: tg.Header}
	tr := &mcp.StreamableClientTransport{Endpoint: tg.MCPURL, HTTPClient: &http.Client{Transport: h.states}, MaxRetries: -1}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: era})
	if err != nil {
		t.Fatalf("connect on %s: %v", era, err)
	}
	// Cleanups run last-in first-out: release a held handler, then close
	// (Close waits for running handlers).
	t.Cleanup(func() { _ = cs.Close() })
	t.Cleanup(func() { close(release) })
	if got := cs.InitializeResult().ProtocolVersion; got != era {
		t.Fatalf("negotiated %s, asked for %s (a client silently falls back when refused)", got, era)
	}
	h.cs = cs
	return h
}

// Call calls a tool and returns its structured result, or its error text.
func Call(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any, state string) (map[string]any, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args, RequestState: state})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if res.IsError {
		var parts []string
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				parts = append(parts, tc.Text)
			}
		}
		return nil, strings.Join(parts, " ")
	}
	var out map[string]any
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("%s: structured content %s: %v", name, b, err)
	}
	return out, ""
}

func mustCall(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) map[string]any {
	t.Helper()
	out, errText := Call(t, cs, name, args, "")
	if errText != "" {
		t.Fatalf("%s: tool error %s", name, errText)
	}
	return out
}

func keys(m map[string]any) string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return fmt.Sprint(sortStrings(ks))
}

func sortStrings(s []string) []string {
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	return s
}

// RunOne is the scenario for one era, with or without URL elicitation.
func RunOne(t *testing.T, tg Target, era string, url bool) {
	want := tg.Expect(era, url)
	answer := "decline"
	if want.SessionPush {
		answer = "" // a host that ignores the push
	}
	h := connect(t, tg, era, url, answer)
	const message = "Deploy build 42 to production?"
	id, reviewURL := create(t, h, message)
	if want.SessionPush {
		expectPush(t, h, id, reviewURL, message, 15*time.Second, "on the session")
	}
	firstWaits(t, h, want, id, reviewURL, message)

	// The reviewer answers on the page the result named (or wherever the
	// target decides).
	tg.decide(t, reviewURL, "submitted")
	if out := mustCall(t, h.cs, "elicit_await", map[string]any{"elicitationId": id}); fmt.Sprint(out) != "map[status:submitted]" {
		t.Fatalf("elicit_await after the decision: %v", out)
	}
	res := mustCall(t, h.cs, "elicit_result", map[string]any{"elicitationId": id})
	if res["decision"] != "submitted" || fmt.Sprint(res["context"]) != "map[build:42]" {
		t.Fatalf("elicit_result: %v", res)
	}
	if want.SessionPush {
		expectComplete(t, h, id, "the decision")
	}
	select {
	case p := <-h.elicits:
		t.Fatalf("an unexpected push %+v (era %s, url %v)", p, era, url)
	default:
	}
	checkPushAudit(t, h, id, want.SessionPush || want.InputPush)
	if want.SessionPush {
		cancelCompletes(t, h)
	}
	if want.SessionPush || want.InputPush {
		quietRequest(t, h)
	}
}

// Decide, if set, answers a request instead of its review page on this
// deployment (through another process, say): the complete notice must
// follow a decision wherever it was made.
func (t Target) decide(tt *testing.T, reviewURL, decision string) {
	if t.Decide != nil {
		t.Decide(tt, reviewURL, decision)
		return
	}
	Decide(tt, reviewURL, decision)
}

// create makes an approval and checks its creation result.
func create(t *testing.T, h *host, message string) (id, reviewURL string) {
	t.Helper()
	created := mustCall(t, h.cs, "elicit_approval", map[string]any{"message": message, "context": map[string]any{"build": 42}})
	if got := keys(created); got != "[elicitationId expiresAt reviewUrl status]" || created["status"] != "pending" {
		t.Fatalf("creation result %v", created)
	}
	return created["elicitationId"].(string), created["reviewUrl"].(string)
}

// expectPush waits up to d for the URL-mode push of id.
func expectPush(t *testing.T, h *host, id, reviewURL, message string, d time.Duration, how string) {
	t.Helper()
	var p *mcp.ElicitParams
	select {
	case p = <-h.elicits:
	default:
		if d == 0 {
			t.Fatalf("no URL-mode elicitation was pushed %s", how)
		}
		select {
		case p = <-h.elicits:
		case <-time.After(d):
			t.Fatalf("no URL-mode elicitation was pushed %s", how)
		}
	}
	if p.Mode != "url" || p.URL != reviewURL || p.ElicitationID != id || p.Message != message {
		t.Fatalf("pushed %s: %+v, want mode url, the reviewUrl, the elicitationId and the message", how, p)
	}
}

// firstWaits: a sessionless host that declared URL elicitation is handed
// the link by its first wait (the client answers and retries by itself);
// every host gets the same pending status, and at most one push.
func firstWaits(t *testing.T, h *host, want Want, id, reviewURL, message string) {
	t.Helper()
	out := mustCall(t, h.cs, "elicit_await", map[string]any{"elicitationId": id, "waitSeconds": 0.5})
	if fmt.Sprint(out) != "map[status:pending]" {
		t.Fatalf("first elicit_await: %v", out)
	}
	if want.InputPush {
		expectPush(t, h, id, reviewURL, message, 0, "by the first elicit_await")
		refusedStates(t, h, id)
	}
	if out := mustCall(t, h.cs, "elicit_await", map[string]any{"elicitationId": id, "waitSeconds": 0.2}); out["status"] != "pending" {
		t.Fatalf("second elicit_await: %v", out)
	}
}

// refusedStates: the request state the client's retry used is refused
// when replayed, altered or foreign, as the request's invalid parameters
// (JSON-RPC -32602).
func refusedStates(t *testing.T, h *host, id string) {
	t.Helper()
	state := h.states.Last()
	if state == "" {
		t.Fatal("no requestState seen")
	}
	for name, s := range map[string]string{"replayed": state, "tampered": state[:len(state)-2] + "xx", "foreign": "s1.k0.AAAA"} {
		ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
		_, err := h.cs.CallTool(ctx, &mcp.CallToolParams{Name: "elicit_await", Arguments: map[string]any{"elicitationId": id, "waitSeconds": 0.1}, RequestState: s})
		cancel()
		var je *jsonrpc.Error
		if !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams || !strings.HasPrefix(je.Message, "requestState ") {
			t.Errorf("%s request state: %v, want a -32602 error: requestState …", name, err)
		}
	}
}

// expectComplete waits for the complete notice of id.
func expectComplete(t *testing.T, h *host, id, after string) {
	t.Helper()
	select {
	case got := <-h.completes:
		if got != id {
			t.Fatalf("complete notice for %q, want %q", got, id)
		}
	case <-time.After(15 * time.Second):
		t.Fatalf("no notifications/elicitation/complete after %s", after)
	}
}

// checkPushAudit: the audit trail records one push when one was made.
func checkPushAudit(t *testing.T, h *host, id string, pushed bool) {
	t.Helper()
	st := mustCall(t, h.cs, "elicit_status", map[string]any{"elicitationId": id, "includeAudit": true})
	pushes := strings.Count(fmt.Sprint(st["audit"]), "action:pushed")
	if wantN := map[bool]int{true: 1, false: 0}[pushed]; pushes != wantN {
		t.Errorf("audit records %d pushes, want %d: %v", pushes, wantN, st["audit"])
	}
}

// cancelCompletes: a request the agent cancels (no review page involved)
// gets its complete notice too.
func cancelCompletes(t *testing.T, h *host) {
	t.Helper()
	const message = "Withdrawn soon"
	id, reviewURL := create(t, h, message)
	expectPush(t, h, id, reviewURL, message, 15*time.Second, "on the session")
	mustCall(t, h.cs, "elicit_cancel", map[string]any{"elicitationId": id})
	expectComplete(t, h, id, "elicit_cancel")
}

// quietRequest: push: false turns the push off for one request.
func quietRequest(t *testing.T, h *host) {
	t.Helper()
	c2 := mustCall(t, h.cs, "elicit_approval", map[string]any{"message": "Quiet", "context": 1, "push": false})
	mustCall(t, h.cs, "elicit_await", map[string]any{"elicitationId": c2["elicitationId"], "waitSeconds": 0.3})
	select {
	case p := <-h.elicits:
		t.Fatalf("pushed a request created with push: false: %+v", p)
	case <-time.After(300 * time.Millisecond):
	}
}

// Decide answers a request on its review page as a browser would.
func Decide(t *testing.T, reviewURL, decision string) {
	t.Helper()
	tasktest.Decide(t, reviewURL, decision, "")
}
