package mcptools_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/mcptools"
)

func tryConnect(e *env) (*mcp.ClientSession, error) { return tryConnectAs(e, "") }

// tryConnectAs opens a 2025-11-25 session with the bearer token (none if
// empty).
func tryConnectAs(e *env, token string) (*mcp.ClientSession, error) {
	client := mcp.NewClient(&mcp.Implementation{Name: "sessions-test", Version: "1"}, nil)
	tr := &mcp.StreamableClientTransport{
		Endpoint: e.servers[0].URL + "/mcp", HTTPClient: &http.Client{Transport: roundTrip{e: e, token: token}},
		DisableStandaloneSSE: true, MaxRetries: -1,
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return client.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
}

func mustConnect(t *testing.T, e *env, token string) *mcp.ClientSession {
	t.Helper()
	cs, err := tryConnectAs(e, token)
	if err != nil {
		t.Fatalf("connect with %q: %v", token, err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// rawInitialize posts an initialize as curl would and returns the status,
// the Retry-After header and the body.
func rawInitialize(t *testing.T, e *env, token string) (int, string, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", e.servers[0].URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body := read(t, res)
	return res.StatusCode, res.Header.Get("Retry-After"), body
}

// status calls elicit_status for a made-up id: a session that works
// answers not_found, an evicted one fails.
func statusErr(cs *mcp.ClientSession) error {
	_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: mcptools.ToolStatus, Arguments: map[string]any{"elicitationId": "x"}})
	return err
}

// TestSessionCap: with one principal's share full (a keyless server: every
// local client is the address 127.0.0.1; its share is half the cap,
// whatever the default share), a new session closes that principal's
// idlest one instead of being refused; the others keep working; a closed
// session makes room without closing any.
func TestSessionCap(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{maxSessions: 6, sessionIdle: -1})
	open := []*mcp.ClientSession{mustConnect(t, e, ""), mustConnect(t, e, ""), mustConnect(t, e, "")}
	// open[0] is the idlest: the others make a call after it opened. Each
	// settle lets the last use before it be recorded (as a handler
	// returns, after its client read the response) before the next call.
	e.settle()
	for _, cs := range open[1:] {
		if err := statusErr(cs); err != nil {
			t.Fatal(err)
		}
		e.settle()
	}
	fourth := mustConnect(t, e, "")
	if err := statusErr(open[0]); err == nil {
		t.Error("the idlest session still answers after a fourth one opened at the cap")
	}
	// Its client is told why, in the 404 that makes it initialize again.
	req, _ := http.NewRequest("POST", e.servers[0].URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":9,"method":"ping"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", open[0].ID())
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if body := read(t, res); res.StatusCode != http.StatusNotFound || !strings.Contains(body, "closed to make room for a newer session (a client holds at most 3") {
		t.Errorf("the evicted session's next request: %d %q", res.StatusCode, body)
	}
	for i, cs := range append(open[1:], fourth) {
		if err := statusErr(cs); err != nil {
			t.Errorf("session %d: %v", i+1, err)
		}
	}
	// Closing one (DELETE) makes room for another, which closes none.
	if err := open[1].Close(); err != nil {
		t.Fatal(err)
	}
	mustConnect(t, e, "")
	for i, cs := range []*mcp.ClientSession{open[2], fourth} {
		if err := statusErr(cs); err != nil {
			t.Errorf("after a session closed and another opened, session %d: %v", i, err)
		}
	}
}

// TestSessionShareBusy: a principal whose every session has a call in
// flight is refused (429) with a sentence naming its share, not the
// server's fullness.
func TestSessionShareBusy(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{maxSessions: 10, share: 2, sessionIdle: -1})
	var waits []<-chan callResult
	var created []map[string]any
	for range 2 {
		cs := mustConnect(t, e, "")
		c := ok(t, cs, mcptools.ToolApproval, map[string]any{"message": "m", "context": 1})
		created = append(created, c)
		waits = append(waits, e.awaitAsync(t, cs, map[string]any{"elicitationId": c["elicitationId"], "waitSeconds": 20}))
	}
	code, retry, body := rawInitialize(t, e, "")
	if code != http.StatusTooManyRequests || retry == "" || !strings.Contains(body, "too many open MCP sessions for this client (address 127.0.0.1): it has 2, its share of this server's 10") {
		t.Errorf("refusal %d (Retry-After %q) %q", code, retry, body)
	}
	for i, c := range created {
		e.decide(t, c, elicitation.Submission{Decision: elicitation.DecisionSubmitted})
		if r := receive(t, waits[i], 10*time.Second); r.structured["status"] != "submitted" {
			t.Errorf("await %d: %+v", i, r)
		}
	}
	// With the calls done, the idlest gives way.
	if code, _, body := rawInitialize(t, e, ""); code != http.StatusOK {
		t.Errorf("after the calls ended: %d %q", code, body)
	}
}

// TestSessionKeysShare: with API keys, one key flooding the endpoint with
// initializes churns only its own share: another key still connects and
// its sessions are never closed; a key with no session, facing a server
// full of others' sessions, is given the place of the idlest session of
// the key holding the most (TestSessionFairShare has more).
func TestSessionKeysShare(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{maxSessions: 6, share: 3, sessionIdle: -1, auth: map[string]string{"ta": "alice", "tb": "bob", "tc": "carol"}})
	bob := mustConnect(t, e, "tb")
	for i := range 40 {
		if code, _, body := rawInitialize(t, e, "ta"); code != http.StatusOK {
			t.Fatalf("alice's initialize %d: %d %q", i, code, body)
		}
	}
	if err := statusErr(bob); err != nil {
		t.Fatalf("bob's session after alice's flood: %v", err)
	}
	bob2, bob3 := mustConnect(t, e, "tb"), mustConnect(t, e, "tb")
	for i, cs := range []*mcp.ClientSession{bob, bob2, bob3} {
		if err := statusErr(cs); err != nil {
			t.Errorf("bob's session %d: %v", i, err)
		}
	}
	// Six open: alice's three and bob's three. Carol's takes the place of
	// alice's idlest (bob's were used since).
	e.settle()
	if code, _, body := rawInitialize(t, e, "tc"); code != http.StatusOK {
		t.Errorf("carol: %d %q", code, body)
	}
	for i, cs := range []*mcp.ClientSession{bob, bob2, bob3} {
		if err := statusErr(cs); err != nil {
			t.Errorf("bob's session %d after carol's: %v", i, err)
		}
	}
}

// TestSessionlessUnaffectedByFullCap: with the session cap full (a
// session-era initialize of that principal is refused with 503), the
// same principal's 2026-07-28 sessionless client still creates, reads and
// waits: the cap counts sessions, and a sessionless request opens none.
func TestSessionlessUnaffectedByFullCap(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{maxSessions: 2, share: 2, sessionIdle: -1, auth: map[string]string{"ta": "alice", "tb": "bob", "tc": "carol"}})
	mustConnect(t, e, "ta")
	mustConnect(t, e, "tc")
	if code, _, body := rawInitialize(t, e, "tb"); code != http.StatusServiceUnavailable || !strings.Contains(body, "this MCP server is full") {
		t.Fatalf("bob's session-era initialize at a full cap: %d %q", code, body)
	}
	bob := e.connect(t, proto20260728, "tb")
	c := ok(t, bob, mcptools.ToolApproval, map[string]any{"message": "m", "context": 1})
	ok(t, bob, mcptools.ToolStatus, map[string]any{"elicitationId": c["elicitationId"]})
	done := e.awaitAsync(t, bob, map[string]any{"elicitationId": c["elicitationId"], "waitSeconds": 20})
	e.decide(t, c, elicitation.Submission{Decision: elicitation.DecisionSubmitted})
	if r := receive(t, done, 10*time.Second); r.structured["status"] != "submitted" {
		t.Errorf("bob's sessionless await at a full session cap: %+v", r)
	}
	if code, _, _ := rawInitialize(t, e, "tb"); code != http.StatusServiceUnavailable {
		t.Errorf("bob's sessionless calls took or freed a session place: initialize now %d", code)
	}
}

// TestSessionSlowBodies: initializes whose bodies never arrive hold no
// place: with the cap at 4 (a principal's share: 2) and 20 such requests
// inside the handler, two real sessions of the same principal still open.
func TestSessionSlowBodies(t *testing.T) {
	arrived := make(chan struct{}, 64)
	e := newEnv(t, envOptions{maxSessions: 4, sessionIdle: -1, arrived: func(r *http.Request) {
		if r.Header.Get("X-Slow") != "" {
			arrived <- struct{}{}
		}
	}})
	u, _ := url.Parse(e.servers[0].URL)
	for range 20 {
		c, err := net.Dial("tcp", u.Host)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: %s\r\nX-Slow: 1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 200\r\n\r\n{", u.Host)
	}
	for i := range 20 {
		select {
		case <-arrived:
		case <-time.After(10 * time.Second):
			t.Fatalf("only %d slow requests reached the handler", i)
		}
	}
	a, b := mustConnect(t, e, ""), mustConnect(t, e, "")
	for _, cs := range []*mcp.ClientSession{a, b} {
		if err := statusErr(cs); err != nil {
			t.Error(err)
		}
	}
}

// TestSessionIdle: a session that receives no request for SessionIdle is
// closed, which frees its place under the cap.
func TestSessionIdle(t *testing.T) {
	e := newEnv(t, envOptions{maxSessions: 1, sessionIdle: 300 * time.Millisecond})
	cs, err := tryConnect(e)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		// Refused while the first session lives; accepted once it idled out.
		next, err := tryConnect(e)
		if err == nil {
			_ = next.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the idle session never closed: %v", err)
		}
		time.Sleep(50 * time.Millisecond) // polling a timer-driven close
	}
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: mcptools.ToolStatus, Arguments: map[string]any{"elicitationId": "x"}}); err == nil {
		t.Error("the idled-out session still answers")
	}
}

// TestBodyLimit: a body beyond MaxBodyBytes is refused with 413 on both
// the session and the sessionless path.
func TestBodyLimit(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{maxBody: 64 << 10})
	big := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"elicit_status","arguments":{"elicitationId":"` + strings.Repeat("x", 70<<10) + `"}}}`
	for _, version := range []string{"", mcptools.FirstSessionlessVersion} {
		req, _ := http.NewRequest("POST", e.servers[0].URL+"/mcp", strings.NewReader(big))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if version != "" {
			req.Header.Set("Mcp-Protocol-Version", version)
			req.Header.Set("Mcp-Method", "tools/call")
			req.Header.Set("Mcp-Name", "elicit_status")
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		read(t, res)
		if res.StatusCode != http.StatusRequestEntityTooLarge {
			t.Errorf("protocol %q: a %d-byte body got %d, want 413", version, len(big), res.StatusCode)
		}
	}
}

func read(t *testing.T, res *http.Response) string {
	t.Helper()
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
