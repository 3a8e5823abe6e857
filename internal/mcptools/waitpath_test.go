package mcptools_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/boltstore"
	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/mcptools"
)

// handOverEnv is one store and Service served twice on the sessionless
// era: by a server that hands its waits over (waitpath.go) and by one
// that never does, so that a test sends both the same request.
type handOverEnv struct {
	svc           *elicitation.Service
	store         *waitEvents
	on, off       *mcptools.Server
	onURL, offURL string
}

// waitEvents wraps a store so that a test learns when a wait (a store
// Watch) starts and when it returns.
type waitEvents struct {
	elicitation.Store
	started, returned chan string
}

// Watch is every wait (Service.Await's, AwaitFunc's, Watch's): it starts
// once registered and returns when stopped.
func (w *waitEvents) Watch(id string, every func() time.Duration, wake func()) (stop func()) {
	unwatch := w.Store.Watch(id, every, wake)
	w.started <- id
	var once sync.Once
	return func() {
		unwatch()
		once.Do(func() { w.returned <- id })
	}
}

func newHandOverEnv(t *testing.T, maxWaits int, parkAfter time.Duration) *handOverEnv {
	t.Helper()
	st, err := boltstore.Open(filepath.Join(t.TempDir(), "store.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	ws := &waitEvents{Store: st, started: make(chan string, 16), returned: make(chan string, 16)}
	e := &handOverEnv{svc: elicitation.NewService(elicitation.Config{Store: ws}), store: ws}
	serve := func(on bool) (*mcptools.Server, string) {
		srv := mcptools.New(mcptools.Options{Service: e.svc, ReviewURL: reviewURL, Name: "elicitation-test", Version: "test", MaxWaits: maxWaits})
		mcptools.SetHandOver(srv, on)
		mcptools.SetParkAfter(srv, parkAfter)
		hs := httptest.NewServer(srv.Handler())
		t.Cleanup(hs.Close)
		return srv, hs.URL
	}
	e.on, e.onURL = serve(true)
	e.off, e.offURL = serve(false)
	return e
}

// post sends a raw sessionless POST with the standard headers of a
// tools/call of name, and returns the response with its body.
func post(ctx context.Context, url, name, body string) (*http.Response, []byte, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", proto20260728)
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", name)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, nil, err
	}
	b, err := io.ReadAll(res.Body)
	_ = res.Body.Close()
	return res, b, err
}

const meta20260728 = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`

func awaitBody(id any, args string) string {
	b, _ := json.Marshal(id)
	return `{"jsonrpc":"2.0","id":` + string(b) + `,"method":"tools/call","params":{"name":"elicit_await","arguments":` + args + `,` + meta20260728 + `}}`
}

// TestHandOverSameBytes: for the same request, a server that hands its
// waits over answers byte for byte (status, headers but Date, body) what
// one that waits in the SDK's handler answers, for every outcome of a
// wait (decided, canceled, the bound elapsing, an unknown id) and for what
// never reaches a wait (bad arguments, a malformed body, a batch, headers
// that do not match the body), and it hands over exactly the calls that
// wait.
func TestHandOverSameBytes(t *testing.T) {
	e := newHandOverEnv(t, 0, time.Hour)
	ctx := context.Background()
	decided, canceled, pending := pendingApproval(t, e.svc), pendingApproval(t, e.svc), pendingApproval(t, e.svc)
	if _, err := e.svc.Submit(ctx, decided.State.ID, decided.ReviewKey, elicitation.Submission{ID: "s", Decision: elicitation.DecisionSubmitted, Comment: "<ok> & \u2028"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Cancel(ctx, elicitation.Anonymous, canceled.State.ID); err != nil {
		t.Fatal(err)
	}
	idArgs := func(id string, extra string) string { return `{"elicitationId":"` + id + `"` + extra + `}` }
	for _, c := range []struct {
		name, tool, body string
		handedOver       bool
	}{
		{"decided", "elicit_await", awaitBody(1, idArgs(decided.State.ID, "")), true},
		{"decided, string id", "elicit_await", awaitBody("a<b>", idArgs(decided.State.ID, "")), true},
		{"canceled", "elicit_await", awaitBody(2, idArgs(canceled.State.ID, "")), true},
		{"bound elapses", "elicit_await", awaitBody(3, idArgs(pending.State.ID, `,"waitSeconds":0.05`)), true},
		{"unknown id", "elicit_await", awaitBody(4, idArgs("AAAAAAAAAAAAAAAAAAAAAA", "")), true},
		{"white space first", "elicit_await", " \n\t" + awaitBody(5, idArgs(decided.State.ID, "")), true},
		{"no id", "elicit_await", awaitBody(6, `{}`), false},
		{"waitSeconds 0", "elicit_await", awaitBody(7, idArgs(pending.State.ID, `,"waitSeconds":0`)), false},
		{"unknown argument", "elicit_await", awaitBody(8, idArgs(pending.State.ID, `,"wait":1`)), false},
		{"arguments not an object", "elicit_await", awaitBody(9, `[1]`), false},
		{"malformed body", "elicit_await", `{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"elicit_await"`, false},
		{"not JSON-RPC", "elicit_await", `{"hello":1}`, false},
		{"batch", "elicit_await", "[" + awaitBody(11, idArgs(decided.State.ID, "")) + "]", false},
		{"header names another tool", "elicit_status", awaitBody(12, idArgs(decided.State.ID, "")), false},
		{"body names another tool", "elicit_await", strings.Replace(awaitBody(13, idArgs(decided.State.ID, "")), `"name":"elicit_await"`, `"name":"elicit_status"`, 1), false},
		{"a status call", "elicit_status", strings.Replace(awaitBody(14, idArgs(decided.State.ID, "")), `"name":"elicit_await"`, `"name":"elicit_status"`, 1), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := mcptools.HandedOver(e.on)
			resOn, on, err := post(ctx, e.onURL+"/mcp", c.tool, c.body)
			if err != nil {
				t.Fatal(err)
			}
			resOff, off, err := post(ctx, e.offURL+"/mcp", c.tool, c.body)
			if err != nil {
				t.Fatal(err)
			}
			if got := mcptools.HandedOver(e.on) - before; got != map[bool]int64{true: 1}[c.handedOver] {
				t.Errorf("handed over %d calls, want handed over: %v", got, c.handedOver)
			}
			if !bytes.Equal(on, off) {
				t.Errorf("bodies differ:\nhanded over: %s\nin the SDK:  %s", on, off)
			}
			if resOn.StatusCode != resOff.StatusCode {
				t.Errorf("status %d, in the SDK %d", resOn.StatusCode, resOff.StatusCode)
			}
			resOn.Header.Del("Date")
			resOff.Header.Del("Date")
			if a, b := fmt.Sprint(resOn.Header), fmt.Sprint(resOff.Header); a != b {
				t.Errorf("headers differ:\nhanded over: %s\nin the SDK:  %s", a, b)
			}
			if c.handedOver && !bytes.Contains(on, []byte(`"structuredContent"`)) && !bytes.Contains(on, []byte(`"isError":true`)) {
				t.Errorf("no result: %s", on)
			}
		})
	}
}

// TestHandOverWakes: a handed-over wait returns the decision that lands
// while it waits, and the cancellation, whether it waits on net/http's
// connection or parked below it (then with Connection: close); its slot
// is held meanwhile (the cap refuses another).
func TestHandOverWakes(t *testing.T) {
	for _, mode := range []struct {
		name      string
		parkAfter time.Duration
	}{{"on the connection", time.Hour}, {"parked", time.Millisecond}} {
		t.Run(mode.name, func(t *testing.T) {
			e := newHandOverEnv(t, 1, mode.parkAfter)
			testHandOverWakes(t, e, mode.parkAfter < time.Second)
		})
	}
}

func testHandOverWakes(t *testing.T, e *handOverEnv, parks bool) {
	ctx := context.Background()
	for _, decide := range []struct {
		name, want string
		do         func(c elicitation.Created) error
	}{
		{"submitted", "submitted", func(c elicitation.Created) error {
			_, err := e.svc.Submit(ctx, c.State.ID, c.ReviewKey, elicitation.Submission{ID: "s", Decision: elicitation.DecisionSubmitted})
			return err
		}},
		{"canceled", "canceled", func(c elicitation.Created) error {
			_, err := e.svc.Cancel(ctx, elicitation.Anonymous, c.State.ID)
			return err
		}},
	} {
		t.Run(decide.name, func(t *testing.T) {
			c := pendingApproval(t, e.svc)
			before, parkedBefore := mcptools.HandedOver(e.on), mcptools.Parked(e.on)
			type response struct {
				res  *http.Response
				body []byte
				err  error
			}
			done := make(chan response, 1)
			go func() {
				res, b, err := post(ctx, e.onURL+"/mcp", "elicit_await", awaitBody(1, `{"elicitationId":"`+c.State.ID+`","waitSeconds":30}`))
				done <- response{res, b, err}
			}()
			<-e.store.started
			if got := mcptools.HandedOver(e.on) - before; got != 1 {
				t.Errorf("handed over %d", got)
			}
			// The cap of one wait is held by the handed-over one.
			other := pendingApproval(t, e.svc)
			if _, b, _ := post(ctx, e.onURL+"/mcp", "elicit_await", awaitBody(2, `{"elicitationId":"`+other.State.ID+`"}`)); !bytes.Contains(b, []byte(`already has 1 elicit_await calls waiting`)) {
				t.Errorf("a second wait past the cap: %s", b)
			}
			if parks {
				// Parked once its timer fires; the decision may only land after.
				for mcptools.Parked(e.on) == parkedBefore {
					runtime.Gosched()
				}
			}
			if err := decide.do(c); err != nil {
				t.Fatal(err)
			}
			r := <-done
			<-e.store.returned
			if r.err != nil {
				t.Fatal(r.err)
			}
			var msg struct {
				Result struct {
					StructuredContent struct{ Status string } `json:"structuredContent"`
				} `json:"result"`
			}
			if err := json.Unmarshal(r.body, &msg); err != nil || msg.Result.StructuredContent.Status != decide.want {
				t.Errorf("await answered %s, want status %s", r.body, decide.want)
			}
			if r.res.Close != parks || r.res.Header.Get("Content-Type") != "application/json" || r.res.ContentLength != int64(len(r.body)) {
				t.Errorf("close %v (parked: %v), headers %v", r.res.Close, parks, r.res.Header)
			}
		})
	}
}

// TestParkedSameBody: a parked wait whose bound elapses answers the body
// a wait in the SDK's handler answers, byte for byte, and the same
// headers but for Connection: close.
func TestParkedSameBody(t *testing.T) {
	e := newHandOverEnv(t, 0, time.Millisecond)
	ctx := context.Background()
	c := pendingApproval(t, e.svc)
	body := awaitBody("x", `{"elicitationId":"`+c.State.ID+`","waitSeconds":0.3}`)
	resOn, on, err := post(ctx, e.onURL+"/mcp", "elicit_await", body)
	if err != nil {
		t.Fatal(err)
	}
	resOff, off, err := post(ctx, e.offURL+"/mcp", "elicit_await", body)
	if err != nil {
		t.Fatal(err)
	}
	if mcptools.Parked(e.on) != 1 {
		t.Errorf("parked %d", mcptools.Parked(e.on))
	}
	if !bytes.Equal(on, off) || !bytes.Contains(on, []byte(`"status":"pending"`)) {
		t.Errorf("bodies:\nparked:     %s\nin the SDK: %s", on, off)
	}
	if !resOn.Close || resOff.Close {
		t.Errorf("Connection: close parked %v, in the SDK %v", resOn.Close, resOff.Close)
	}
	for _, h := range []*http.Response{resOn, resOff} {
		h.Header.Del("Date")
		h.Header.Del("Connection")
	}
	if a, b := fmt.Sprint(resOn.Header), fmt.Sprint(resOff.Header); a != b || resOn.StatusCode != resOff.StatusCode {
		t.Errorf("headers differ:\nparked:     %d %s\nin the SDK: %d %s", resOn.StatusCode, a, resOff.StatusCode, b)
	}
}

// TestHandOverClientGoesAway: a client that goes away while its handed-over
// call waits, on net/http's connection or parked, ends the wait and frees
// its slot at once (the cap of one lets the next call wait).
func TestHandOverClientGoesAway(t *testing.T) {
	for _, mode := range []struct {
		name      string
		parkAfter time.Duration
	}{{"on the connection", time.Hour}, {"parked", time.Millisecond}} {
		t.Run(mode.name, func(t *testing.T) {
			testClientGoesAway(t, newHandOverEnv(t, 1, mode.parkAfter), mode.parkAfter < time.Second)
		})
	}
}

func testClientGoesAway(t *testing.T, e *handOverEnv, parks bool) {
	ctx := context.Background()
	c := pendingApproval(t, e.svc)
	cctx, cancel := context.WithCancel(ctx)
	gone := make(chan error, 1)
	go func() {
		_, _, err := post(cctx, e.onURL+"/mcp", "elicit_await", awaitBody(1, `{"elicitationId":"`+c.State.ID+`","waitSeconds":30}`))
		gone <- err
	}()
	<-e.store.started
	if parks {
		for mcptools.Parked(e.on) == 0 {
			runtime.Gosched()
		}
	}
	cancel()
	if err := <-gone; !errors.Is(err, context.Canceled) {
		t.Errorf("the client's call: %v", err)
	}
	select {
	case <-e.store.returned:
	case <-time.After(10 * time.Second):
		t.Fatal("the wait did not end when its client went away")
	}
	// The slot is free: a wait on the same request is not refused (the
	// slot is given back just after the store's wait returns).
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, b, err := post(ctx, e.onURL+"/mcp", "elicit_await", awaitBody(2, `{"elicitationId":"`+c.State.ID+`","waitSeconds":0.05}`))
		if err == nil && bytes.Contains(b, []byte(`busy:`)) && time.Now().Before(deadline) {
			continue
		}
		if err != nil || !bytes.Contains(b, []byte(`"structuredContent":{"status":"pending"}`)) {
			t.Errorf("the next wait: %s %v", b, err)
		}
		break
	}
}
