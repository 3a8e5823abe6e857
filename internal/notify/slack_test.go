package notify_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/notify"
)

func blockKit(t *testing.T) *jsonschema.Resolved {
	t.Helper()
	b, err := os.ReadFile("testdata/blockkit.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

func sampleNotice(ev elicitation.Event) elicitation.Notice {
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	n := elicitation.Notice{
		DeliveryID: "dlv_x", Event: ev, At: t0, ID: "req-1", Kind: elicitation.KindApproval,
		Message: "Deploy api v1.3 to production?", Owner: "alice", CreatedAt: t0, ExpiresAt: t0.Add(time.Hour),
	}
	switch ev {
	case elicitation.EventCreated:
		n.ReviewURL = "https://elicitation.example.com/review/req-1/k3y"
	case elicitation.EventDecided:
		n.Decision, n.DecidedBy, n.At = elicitation.DecisionDeclined, "reviewer", t0.Add(5*time.Minute)
	}
	return n
}

// TestSlackBlockKit: every event's message, including the longest and the
// most hostile agent text, fits Block Kit's shape and limits; the created
// message has the button to the review page; mrkdwn cannot be abused.
func TestSlackBlockKit(t *testing.T) {
	rs := blockKit(t)
	hostile := sampleNotice(elicitation.EventCreated)
	hostile.Message = "<!channel> please <https://evil.example|click> & approve " + strings.Repeat("x", 5000)
	hostile.Kind = elicitation.KindSelection
	cases := map[string]elicitation.Notice{"hostile created": hostile}
	for _, ev := range elicitation.Events {
		cases[string(ev)] = sampleNotice(ev)
	}
	for name, n := range cases {
		b, _ := json.Marshal(notify.SlackMessage(n))
		var doc any
		_ = json.Unmarshal(b, &doc)
		if err := rs.Validate(doc); err != nil {
			t.Errorf("%s: not Block Kit: %v\n%s", name, err, b)
		}
		hasButton := strings.Contains(string(b), `"type":"button"`)
		if hasButton != (n.Event == elicitation.EventCreated) {
			t.Errorf("%s: button %v, want one only on created", name, hasButton)
		}
	}
	b, _ := json.Marshal(notify.SlackMessage(hostile))
	for _, bad := range []string{"<!channel>", "<https://evil.example|click>"} {
		if strings.Contains(string(b), bad) {
			t.Errorf("the agent's %q reached Slack unescaped", bad)
		}
	}
	// The Block Kit shape check can fail: a header over 150 characters is refused.
	var tooLong any
	_ = json.Unmarshal([]byte(`{"text":"t","blocks":[{"type":"header","text":{"type":"plain_text","text":"`+strings.Repeat("h", 151)+`"}}]}`), &tooLong)
	if rs.Validate(tooLong) == nil {
		t.Error("the schema accepts a 151-character header")
	}
}

// TestSlackSend posts to an incoming-webhook endpoint, which answers as
// Slack does: 200 "ok", or 4xx with an error word (permanent: no retry).
func TestSlackSend(t *testing.T) {
	rs := blockKit(t)
	var got []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ = io.ReadAll(r.Body)
		if r.URL.Path == "/services/gone" {
			http.Error(w, "no_service", http.StatusNotFound)
			return
		}
		if r.Header.Get("Content-Type") != "application/json" {
			http.Error(w, "invalid_payload", http.StatusBadRequest)
			return
		}
		_, _ = io.WriteString(w, "ok")
	}))
	defer srv.Close()
	s := &notify.Slack{URL: srv.URL + "/services/T0/B0/secret", Client: notify.HTTPClient()}
	if err := s.Send(context.Background(), sampleNotice(elicitation.EventCreated)); err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal(got, &doc); err != nil || rs.Validate(doc) != nil {
		t.Errorf("posted %s", got)
	}
	gone := &notify.Slack{URL: srv.URL + "/services/gone", Client: notify.HTTPClient()}
	err := gone.Send(context.Background(), sampleNotice(elicitation.EventCreated))
	se, ok := err.(*notify.SendError)
	if !ok || !se.Permanent || se.Reason != "HTTP 404" || strings.Contains(err.Error(), srv.URL) {
		t.Errorf("removed webhook: %v (the reason must not carry the secret URL)", err)
	}
}

// TestNtfy publishes with ntfy's JSON API: topic, title, message, a tap
// that opens the review page, the access token.
func TestNtfy(t *testing.T) {
	var body map[string]any
	var auth string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth, body = r.Header.Get("Authorization"), nil
		if r.URL.Path != "/" || json.NewDecoder(r.Body).Decode(&body) != nil {
			http.Error(w, "bad", http.StatusBadRequest)
			return
		}
		_, _ = io.WriteString(w, `{"id":"abc","event":"message"}`)
	}))
	defer srv.Close()
	p := &notify.Ntfy{URL: srv.URL, Topic: "alice-reviews", Token: "tk_secret", Client: notify.HTTPClient()}
	if err := p.Send(context.Background(), sampleNotice(elicitation.EventCreated)); err != nil {
		t.Fatal(err)
	}
	u := "https://elicitation.example.com/review/req-1/k3y"
	if body["topic"] != "alice-reviews" || body["title"] != "Approval requested" || body["click"] != u || auth != "Bearer tk_secret" ||
		!strings.HasPrefix(body["message"].(string), "Deploy api v1.3 to production?") {
		t.Errorf("published %v (auth %q)", body, auth)
	}
	acts, _ := body["actions"].([]any)
	if len(acts) != 1 || acts[0].(map[string]any)["url"] != u || acts[0].(map[string]any)["action"] != "view" {
		t.Errorf("actions = %v", body["actions"])
	}
	if err := p.Send(context.Background(), sampleNotice(elicitation.EventExpired)); err != nil {
		t.Fatal(err)
	}
	if _, has := body["click"]; has || body["title"] != "Approval request expired unanswered" {
		t.Errorf("expired notice published %v", body)
	}
}
