package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/notify"
)

// TestServeNotifiesAndResumesAfterRestart: "elicitation serve" with a
// signed webhook target sends the created notice from its own process;
// stopped while the notice is in flight (the receiver has it, the server
// never hears back), the restarted server resumes from the outbox and
// sends the same delivery again, which the receiver recognises; the
// delivery status is in elicit_status's audit trail.
func TestServeNotifiesAndResumesAfterRestart(t *testing.T) {
	const secret = "serve-test-secret-0123456789"
	var (
		mu       sync.Mutex
		attempts = map[string]int{}
		accepted = map[string]bool{}
		arrived  = make(chan string, 10)
		hold     = make(chan struct{})
	)
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if notify.Verify([]byte(secret), r.Header, body, time.Now(), time.Hour) != nil {
			http.Error(w, "bad signature", http.StatusUnauthorized)
			t.Errorf("a delivery with a bad signature: %s", body)
			return
		}
		id := r.Header.Get(notify.HeaderDelivery)
		mu.Lock()
		attempts[id]++
		first := attempts[id] == 1
		accepted[id] = true // the receiver keeps it (and drops repeats)
		mu.Unlock()
		arrived <- id
		if first {
			<-hold // the answer never reaches the stopped server
		}
	}))
	defer rc.Close()
	defer close(hold)

	cfgDoc := `{"defaults":["hook"],"targets":{"hook":{"type":"webhook","url":"` + rc.URL + `","secret":"` + secret + `","events":["created","decided","expired"]}}}`
	dir := t.TempDir()
	cfg, err := parseServe([]string{"--addr", "127.0.0.1:0", "--data-dir", dir, "--log-level", "warn", "--notify-config", cfgDoc, "--notify-interval", "100ms"}, io.Discard, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	var clockMu sync.Mutex
	now := time.Now()
	clock := func() time.Time { clockMu.Lock(); defer clockMu.Unlock(); return now }
	m1, err := Start(context.Background(), cfg, io.Discard, WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	s := agent(t, m1.MCPURL)
	res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "elicit_approval", Arguments: map[string]any{"message": "Rotate the prod DB password?", "context": 1, "notify": []string{"pager"}}})
	if err != nil || !res.IsError || !strings.HasPrefix(text(res), `invalid_argument: notify names "pager", which is not a notification target of this deployment; the targets are "hook"`) {
		t.Fatalf("unknown target: %v %s", err, text(res))
	}
	created := call(t, s, "elicit_approval", map[string]any{"message": "Rotate the prod DB password?", "context": map[string]any{"db": "prod"}, "notify": []string{"hook"}})
	id := created["elicitationId"].(string)
	want := elicitation.DeliveryID(id, elicitation.EventCreated, "hook")
	select {
	case got := <-arrived:
		if got != want {
			t.Fatalf("delivery %s, want %s", got, want)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the created notice never arrived")
	}
	_ = s.Close()
	if err := m1.Close(); err != nil { // mid-delivery
		t.Fatal(err)
	}

	// Restart once the in-flight attempt's lease has run out.
	clockMu.Lock()
	now = now.Add(2 * time.Minute)
	clockMu.Unlock()
	m2, err := Start(context.Background(), cfg, io.Discard, WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	defer m2.Close()
	select {
	case got := <-arrived:
		if got != want {
			t.Fatalf("after the restart: delivery %s, want %s again", got, want)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the restarted server did not resume the delivery")
	}
	s2 := agent(t, m2.MCPURL)
	deadline := time.Now().Add(20 * time.Second)
	for {
		st := call(t, s2, "elicit_status", map[string]any{"elicitationId": id, "includeAudit": true})
		b, _ := json.Marshal(st["audit"])
		var tr elicitation.AuditTrail
		_ = json.Unmarshal(b, &tr)
		if len(tr.Entries) == 2 && tr.Entries[1] == (elicitation.AuditEntry{At: tr.Entries[1].At, Action: elicitation.ActionNotified, Principal: elicitation.Notifier, Detail: "created to hook: delivered (attempt 2)"}) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the audit trail never showed the delivery: %s", b)
		}
		time.Sleep(50 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(accepted) != 1 || attempts[want] != 2 {
		t.Errorf("receiver kept %v after attempts %v; want one delivery, sent twice", accepted, attempts)
	}
}
