package mcptools_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/boltstore"
	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/mcptools"
)

// sessionRequest is a client's POST of body to url, in session (none:
// an initialize).
func sessionRequest(ctx context.Context, url, session, body string) *http.Request {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", proto20251125)
	}
	return req
}

// sessionPost sends a raw POST of a 2025-11-25 session (none: an
// initialize) and returns the response with its body.
func sessionPost(ctx context.Context, url, session, body string) (*http.Response, []byte, error) {
	res, err := http.DefaultClient.Do(sessionRequest(ctx, url, session, body))
	if err != nil {
		return nil, nil, err
	}
	b, err := io.ReadAll(res.Body)
	_ = res.Body.Close()
	return res, b, err
}

// openRawSession initializes a 2025-11-25 session at url and returns its id.
func openRawSession(t *testing.T, url string) string {
	t.Helper()
	ctx := context.Background()
	res, _, err := sessionPost(ctx, url, "", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if err != nil {
		t.Fatal(err)
	}
	sid := res.Header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatalf("initialize: HTTP %d, no session", res.StatusCode)
	}
	if res, _, err := sessionPost(ctx, url, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); err != nil || res.StatusCode != http.StatusAccepted {
		t.Fatalf("notifications/initialized: %v %v", res, err)
	}
	return sid
}

func sessionAwaitBody(id any, args string) string {
	b, _ := json.Marshal(id)
	return `{"jsonrpc":"2.0","id":` + string(b) + `,"method":"tools/call","params":{"name":"elicit_await","arguments":` + args + `}}`
}

// eventIDs are an event stream's event ids (its stream's random id, then
// the event's index), which two servers never share.
var eventIDs = regexp.MustCompile(`(?m)^id: [^_\n]+_`)

// TestHandOverSessionSameBytes: on a 2025-11-25 session, a server that
// hands its waits over answers what one that waits in the SDK's handler
// answers (status, headers but Date, the event stream with its priming
// event and its response, byte for byte but for the streams' random ids),
// for every outcome of a wait and for what never reaches one, and hands
// over exactly the calls that wait. A stream whose response was a
// handed-over wait is not replayed from the event store (400, as for a
// stream whose events a store dropped).
func TestHandOverSessionSameBytes(t *testing.T) {
	e := newHandOverEnv(t, 0, time.Hour)
	ctx := context.Background()
	decided, canceled, pending := pendingApproval(t, e.svc), pendingApproval(t, e.svc), pendingApproval(t, e.svc)
	if _, err := e.svc.Submit(ctx, decided.State.ID, decided.ReviewKey, elicitation.Submission{ID: "s", Decision: elicitation.DecisionSubmitted, Comment: "<ok> & \u2028"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Cancel(ctx, elicitation.Anonymous, canceled.State.ID); err != nil {
		t.Fatal(err)
	}
	onURL, offURL := e.onURL+"/mcp", e.offURL+"/mcp"
	onSID, offSID := openRawSession(t, onURL), openRawSession(t, offURL)
	idArgs := func(id string, extra string) string { return `{"elicitationId":"` + id + `"` + extra + `}` }
	for _, c := range []struct {
		name, body string
		handedOver bool
	}{
		{"decided", sessionAwaitBody(1, idArgs(decided.State.ID, "")), true},
		{"decided, string id", sessionAwaitBody("a<b>", idArgs(decided.State.ID, "")), true},
		{"canceled", sessionAwaitBody(2, idArgs(canceled.State.ID, "")), true},
		{"bound elapses", sessionAwaitBody(3, idArgs(pending.State.ID, `,"waitSeconds":0.05`)), true},
		{"unknown id", sessionAwaitBody(4, idArgs("AAAAAAAAAAAAAAAAAAAAAA", "")), true},
		{"white space first", " \n" + sessionAwaitBody(5, idArgs(decided.State.ID, "")), true},
		{"no id", sessionAwaitBody(6, `{}`), false},
		{"waitSeconds 0", sessionAwaitBody(7, idArgs(pending.State.ID, `,"waitSeconds":0`)), false},
		{"malformed body", `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"elicit_await"`, false},
		{"a status call", strings.Replace(sessionAwaitBody(9, idArgs(decided.State.ID, "")), `"name":"elicit_await"`, `"name":"elicit_status"`, 1), false},
		{"a notification", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99,"reason":"elicit_await"}}`, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := mcptools.HandedOver(e.on)
			resOn, on, err := sessionPost(ctx, onURL, onSID, c.body)
			if err != nil {
				t.Fatal(err)
			}
			resOff, off, err := sessionPost(ctx, offURL, offSID, c.body)
			if err != nil {
				t.Fatal(err)
			}
			if got := mcptools.HandedOver(e.on) - before; got != map[bool]int64{true: 1}[c.handedOver] {
				t.Errorf("handed over %d calls, want handed over: %v", got, c.handedOver)
			}
			if a, b := eventIDs.ReplaceAll(on, []byte("id: S_")), eventIDs.ReplaceAll(off, []byte("id: S_")); !bytes.Equal(a, b) {
				t.Errorf("bodies differ:\nhanded over: %s\nin the SDK:  %s", on, off)
			}
			if resOn.StatusCode != resOff.StatusCode {
				t.Errorf("status %d, in the SDK %d", resOn.StatusCode, resOff.StatusCode)
			}
			resOn.Header.Del("Date")
			resOff.Header.Del("Date")
			if a, b := fmt.Sprint(resOn.Header, resOn.TransferEncoding), fmt.Sprint(resOff.Header, resOff.TransferEncoding); a != b {
				t.Errorf("headers differ:\nhanded over: %s\nin the SDK:  %s", a, b)
			}
			if c.handedOver && !bytes.Contains(on, []byte(`"structuredContent"`)) && !bytes.Contains(on, []byte(`"isError":true`)) {
				t.Errorf("no result: %s", on)
			}
			if !c.handedOver || !bytes.HasPrefix(on, []byte("event: prime\nid: ")) {
				return
			}
			prime, _, _ := strings.Cut(strings.TrimPrefix(string(on), "event: prime\nid: "), "\n")
			get := func(url, sid string) int {
				code, _ := resumeStream(ctx, t, url, sid, prime)
				return code
			}
			if got := get(onURL, onSID); got != http.StatusBadRequest {
				t.Errorf("replay of a handed-over stream: HTTP %d, want 400", got)
			}
		})
	}
}

// TestHandOverSessionWakes: the go-sdk client's elicit_await on a
// 2025-11-25 session is handed over, on net/http's connection or parked,
// returns the decision that lands while it waits, and the session goes on
// (the next call, on a new connection where the parked one was closed).
func TestHandOverSessionWakes(t *testing.T) {
	for _, mode := range []struct {
		name      string
		parkAfter time.Duration
	}{{"on the connection", time.Hour}, {"parked", time.Millisecond}} {
		t.Run(mode.name, func(t *testing.T) {
			e := newHandOverEnv(t, 0, mode.parkAfter)
			ctx := context.Background()
			client := mcp.NewClient(&mcp.Implementation{Name: "handover-test", Version: "1"}, nil)
			cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: e.onURL + "/mcp", DisableStandaloneSSE: true, MaxRetries: -1},
				&mcp.ClientSessionOptions{ProtocolVersion: proto20251125})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			for i := range 2 {
				c := pendingApproval(t, e.svc)
				before, parkedBefore := mcptools.HandedOver(e.on), mcptools.Parked(e.on)
				done := make(chan callResult, 1)
				go func() {
					r, err := callE(cs, mcptools.ToolAwait, map[string]any{"elicitationId": c.State.ID, "waitSeconds": 30})
					if err != nil {
						r = callResult{isError: true, text: err.Error()}
					}
					done <- r
				}()
				<-e.store.started
				if got := mcptools.HandedOver(e.on) - before; got != 1 {
					t.Errorf("call %d: handed over %d", i, got)
				}
				if mode.parkAfter < time.Second {
					for mcptools.Parked(e.on) == parkedBefore {
						runtime.Gosched()
					}
				}
				if _, err := e.svc.Submit(ctx, c.State.ID, c.ReviewKey, elicitation.Submission{ID: "s", Decision: elicitation.DecisionSubmitted}); err != nil {
					t.Fatal(err)
				}
				r := receive(t, done, 10*time.Second)
				<-e.store.returned
				if r.isError || r.structured["status"] != "submitted" {
					t.Errorf("call %d: await answered %v %q", i, r.structured, r.text)
				}
			}
		})
	}
}

// TestHandOverSessionInFlight: a session whose elicit_await waits handed
// over (parked, the SDK done with its POST) still counts as in use, so a
// principal at its share of one session is refused another (429) rather
// than having the waiting one closed; once the wait ends it is idle again
// and gives way.
func TestHandOverSessionInFlight(t *testing.T) {
	st, err := boltstore.Open(filepath.Join(t.TempDir(), "store.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	ws := &waitEvents{Store: st, started: make(chan string, 16), returned: make(chan string, 16)}
	svc := elicitation.NewService(elicitation.Config{Store: ws})
	srv := mcptools.New(mcptools.Options{Service: svc, ReviewURL: reviewURL, Name: "elicitation-test", Version: "test", SessionsPerPrincipal: 1})
	mcptools.SetParkAfter(srv, time.Millisecond)
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	url := hs.URL + "/mcp"
	ctx := context.Background()
	c := pendingApproval(t, svc)
	sid := openRawSession(t, url)
	done := make(chan []byte, 1)
	go func() {
		_, b, _ := sessionPost(ctx, url, sid, sessionAwaitBody(1, `{"elicitationId":"`+c.State.ID+`","waitSeconds":30}`))
		done <- b
	}()
	<-ws.started
	for mcptools.Parked(srv) == 0 {
		runtime.Gosched()
	}
	initialize := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
	if res, b, err := sessionPost(ctx, url, "", initialize); err != nil || res.StatusCode != http.StatusTooManyRequests {
		t.Errorf("a second session while the first waits: %v %s %v, want 429", res.StatusCode, b, err)
	}
	if _, err := svc.Submit(ctx, c.State.ID, c.ReviewKey, elicitation.Submission{ID: "s", Decision: elicitation.DecisionSubmitted}); err != nil {
		t.Fatal(err)
	}
	if b := <-done; !bytes.Contains(b, []byte(`"status":"submitted"`)) {
		t.Errorf("await answered %s", b)
	}
	<-ws.returned
	// The slot and the session's use are given back just after the
	// store's wait returns.
	deadline := time.Now().Add(10 * time.Second)
	for {
		res, b, err := sessionPost(ctx, url, "", initialize)
		if err == nil && res.StatusCode == http.StatusTooManyRequests && time.Now().Before(deadline) {
			continue
		}
		if err != nil || res.StatusCode != http.StatusOK || res.Header.Get("Mcp-Session-Id") == "" {
			t.Errorf("a second session once the wait ended: %v %s %v", res.StatusCode, b, err)
		}
		break
	}
}

// TestHandOverSessionClientCancels: a go-sdk client that cancels its
// elicit_await on a 2025-11-25 session (which ends the call's HTTP
// request) ends the handed-over wait, parked or not, at once.
func TestHandOverSessionClientCancels(t *testing.T) {
	for _, mode := range []struct {
		name      string
		parkAfter time.Duration
	}{{"on the connection", time.Hour}, {"parked", time.Millisecond}} {
		t.Run(mode.name, func(t *testing.T) {
			e := newHandOverEnv(t, 0, mode.parkAfter)
			ctx := context.Background()
			client := mcp.NewClient(&mcp.Implementation{Name: "handover-test", Version: "1"}, nil)
			cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: e.onURL + "/mcp", DisableStandaloneSSE: true, MaxRetries: -1},
				&mcp.ClientSessionOptions{ProtocolVersion: proto20251125})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			c := pendingApproval(t, e.svc)
			cctx, cancel := context.WithCancel(ctx)
			done := make(chan error, 1)
			go func() {
				_, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: mcptools.ToolAwait, Arguments: map[string]any{"elicitationId": c.State.ID, "waitSeconds": 30}})
				done <- err
			}()
			<-e.store.started
			if mode.parkAfter < time.Second {
				for mcptools.Parked(e.on) == 0 {
					runtime.Gosched()
				}
			}
			cancel()
			if err := <-done; err == nil {
				t.Error("the canceled call returned no error")
			}
			select {
			case <-e.store.returned:
			case <-time.After(10 * time.Second):
				t.Fatal("the wait did not end when its client canceled")
			}
		})
	}
}

// TestHandOverSessionCancelled: a notifications/cancelled naming a
// handed-over elicit_await of the same session ends its wait, parked or
// not, as it ends a wait in the SDK's handler (a TypeScript client's
// cancel sends it and keeps the connection); one naming another id, or
// sent on another session, does not.
func TestHandOverSessionCancelled(t *testing.T) {
	for _, mode := range []struct {
		name      string
		parkAfter time.Duration
	}{{"on the connection", time.Hour}, {"parked", time.Millisecond}} {
		t.Run(mode.name, func(t *testing.T) {
			e := newHandOverEnv(t, 0, mode.parkAfter)
			ctx := context.Background()
			url := e.onURL + "/mcp"
			sid, other := openRawSession(t, url), openRawSession(t, url)
			c := pendingApproval(t, e.svc)
			done := make(chan []byte, 1)
			go func() {
				_, b, _ := sessionPost(ctx, url, sid, sessionAwaitBody(7, `{"elicitationId":"`+c.State.ID+`","waitSeconds":30}`))
				done <- b
			}()
			<-e.store.started
			if mode.parkAfter < time.Second {
				for mcptools.Parked(e.on) == 0 {
					runtime.Gosched()
				}
			}
			cancelled := func(session string, id int) {
				res, _, err := sessionPost(ctx, url, session, fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%d}}`, id))
				if err != nil || res.StatusCode != http.StatusAccepted {
					t.Fatalf("notifications/cancelled: %v %v", res, err)
				}
			}
			cancelled(sid, 8)
			cancelled(other, 7)
			select {
			case id := <-e.store.returned:
				t.Fatalf("the wait of %s ended on a notification that names another call", id)
			case <-time.After(100 * time.Millisecond): // nothing should happen: a bounded look
			}
			cancelled(sid, 7)
			select {
			case <-e.store.returned:
			case <-time.After(10 * time.Second):
				t.Fatal("the wait did not end on its notifications/cancelled")
			}
			<-done
		})
	}
}
