package mcptools_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/eventstore"
)

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
	e := newHandOverEnv(t, 0, time.Hour)
	ctx := context.Background()
	c := pendingApproval(t, e.svc)
	id := `{"elicitationId":"` + c.State.ID + `"}`
	sid := openRawSession(t, e.onURL+"/mcp")
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
			e.on.Handler().ServeHTTP(rec, sessionRequest(ctx, e.onURL+"/mcp", sid, tc.body))
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
	e := newHandOverEnv(t, 0, time.Hour)
	ctx := context.Background()
	c := pendingApproval(t, e.svc)
	url := e.onURL + "/mcp"
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
