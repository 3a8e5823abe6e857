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
	"strings"
	"testing"

	"github.com/mcp-elicitation/elicitation/internal/boltstore"
	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/eventstore"
	"github.com/mcp-elicitation/elicitation/internal/mcptools"
)

// rawEnv is one store and Service served by one server with sessions,
// for tests that send raw HTTP.
type rawEnv struct {
	svc *elicitation.Service
	srv *mcptools.Server
	url string
}

// newRawEnv serves a new store, through wrap if it is not nil, with at
// most maxWaits waiting calls (0: the default).
func newRawEnv(t *testing.T, maxWaits int, wrap func(elicitation.Store) elicitation.Store) *rawEnv {
	t.Helper()
	bolt, err := boltstore.Open(filepath.Join(t.TempDir(), "store.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = bolt.Close() })
	var st elicitation.Store = bolt
	if wrap != nil {
		st = wrap(st)
	}
	e := &rawEnv{svc: elicitation.NewService(elicitation.Config{Store: st})}
	e.srv = mcptools.New(mcptools.Options{Service: e.svc, ReviewURL: reviewURL, Name: "elicitation-test", Version: "test", MaxWaits: maxWaits})
	hs := httptest.NewServer(e.srv.Handler())
	t.Cleanup(hs.Close)
	e.url = hs.URL + "/mcp"
	return e
}

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

// flushRecorder records what a response held at each flush.
type flushRecorder struct {
	*httptest.ResponseRecorder
	flushed []string
}

func (f *flushRecorder) Flush() {
	f.flushed = append(f.flushed, f.Body.String())
	f.ResponseRecorder.Flush()
}

func sessionCallBody(id int, name, args string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, id, name, args)
}

// TestPrimingFlush: on a 2025-11-25 session, a call that cannot wait
// sends its priming event with its answer, in one flush; any other
// request has its priming event flushed before anything else, so that a
// client that loses a waiting call's connection can resume it.
func TestPrimingFlush(t *testing.T) {
	t.Parallel()
	e := newRawEnv(t, 0, nil)
	ctx := context.Background()
	c := pendingApproval(t, e.svc)
	id := `{"elicitationId":"` + c.State.ID + `"}`
	sid := openRawSession(t, e.url)
	for _, tc := range []struct {
		name, body string
		atOnce     bool
	}{
		{"elicit_status", sessionCallBody(1, "elicit_status", id), true},
		{"elicit_result", sessionCallBody(2, "elicit_result", id), true},
		{"elicit_status, white space first", "\n " + sessionCallBody(3, "elicit_status", id), true},
		{"elicit_approval", sessionCallBody(4, "elicit_approval", `{"message":"m","context":1}`), false},
		{"elicit_approval naming elicit_status", sessionCallBody(5, "elicit_approval", `{"message":"\"elicit_status\"","context":1}`), false},
		{"tools/list", `{"jsonrpc":"2.0","id":6,"method":"tools/list"}`, false},
		{"elicit_cancel", sessionCallBody(7, "elicit_cancel", id), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &flushRecorder{ResponseRecorder: httptest.NewRecorder()}
			e.srv.Handler().ServeHTTP(rec, sessionRequest(ctx, e.url, sid, tc.body))
			body := rec.Body.String()
			if !strings.HasPrefix(body, "event: prime\n") || !strings.Contains(body, `"result"`) {
				t.Fatalf("HTTP %d %q: want a priming event, then a result", rec.Code, body)
			}
			if len(rec.flushed) == 0 {
				t.Fatalf("never flushed: %q", body)
			}
			first := rec.flushed[0]
			if got := strings.Contains(first, `"result"`); got != tc.atOnce {
				t.Errorf("first flush %q: the answer in it %v, want %v", first, got, tc.atOnce)
			}
			if !strings.HasPrefix(first, "event: prime\n") {
				t.Errorf("first flush %q: want the priming event first", first)
			}
		})
	}
}

// TestResume: a client that lost a call's stream gets its answer again
// from the session's event store (Last-Event-ID of the priming event),
// for as long as the store keeps the stream: a session keeps its most
// recent streams, and an older one is refused (400) rather than replayed
// in part.
func TestResume(t *testing.T) {
	t.Parallel()
	e := newRawEnv(t, 0, nil)
	ctx := context.Background()
	c := pendingApproval(t, e.svc)
	url := e.url
	sid := openRawSession(t, url)
	call := func(n int) (prime, answer string) {
		t.Helper()
		_, b, err := sessionPost(ctx, url, sid, sessionCallBody(n, "elicit_status", `{"elicitationId":"`+c.State.ID+`"}`))
		if err != nil {
			t.Fatal(err)
		}
		head, rest, _ := strings.Cut(string(b), "\n\n")
		prime, _ = strings.CutPrefix(head, "event: prime\nid: ")
		prime, _, _ = strings.Cut(prime, "\n")
		_, answer, _ = strings.Cut(rest, "data: ")
		answer, _, _ = strings.Cut(answer, "\n")
		if prime == head || !json.Valid([]byte(answer)) {
			t.Fatalf("call %d: %q, want a priming event and an answer", n, b)
		}
		return prime, answer
	}
	resume := func(lastEventID string) (int, string) {
		t.Helper()
		return resumeStream(ctx, t, url, sid, lastEventID)
	}
	firstPrime, firstAnswer := call(1)
	code, replayed := resume(firstPrime)
	if code != http.StatusOK || !strings.Contains(replayed, "data: "+firstAnswer+"\n") {
		t.Fatalf("resume: HTTP %d %q, want the answer %q again", code, replayed, firstAnswer)
	}
	var lastPrime string
	for n := range eventstore.DefaultSessionStreams {
		lastPrime, _ = call(2 + n)
	}
	if code, b := resume(firstPrime); code != http.StatusBadRequest {
		t.Errorf("resume of a stream %d streams back: HTTP %d %q, want 400", eventstore.DefaultSessionStreams, code, b)
	}
	if code, b := resume(lastPrime); code != http.StatusOK || !bytes.Contains([]byte(b), []byte(`"result"`)) {
		t.Errorf("resume of the last stream: HTTP %d %q, want its answer", code, b)
	}
}
