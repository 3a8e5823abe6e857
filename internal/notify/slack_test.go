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
	"unicode/utf16"
	"unicode/utf8"

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
		n.Decision, n.At = elicitation.DecisionDeclined, t0.Add(5*time.Minute)
	}
	return n
}

// TestSlackBlockKit: every event's message, including the longest and the
// most hostile agent text, fits Block Kit's shape and limits; the created
// message has the button to the review page; mrkdwn cannot be abused.
func TestSlackBlockKit(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
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
	if !ok || !se.Permanent || se.Reason != "HTTP 404 no_service" || strings.Contains(err.Error(), srv.URL) {
		t.Errorf("removed webhook: %v (the reason must not carry the secret URL)", err)
	}
}

// TestNtfy publishes with ntfy's JSON API: topic, title, message, a tap
// that opens the review page, the access token.
func TestNtfy(t *testing.T) {
	t.Parallel()
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

// slackStandIn answers as Slack's incoming webhooks do: a payload that is
// not valid Block Kit (shape or limits) gets 400 invalid_blocks; refuse
// may refuse more.
type slackStandIn struct {
	srv    *httptest.Server
	posted chan map[string]any // every payload it accepted
}

func newSlackStandIn(t *testing.T, refuse func(map[string]any) string) *slackStandIn {
	rs := blockKit(t)
	s := &slackStandIn{posted: make(chan map[string]any, 10)}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var doc map[string]any
		if err := json.NewDecoder(r.Body).Decode(&doc); err != nil {
			http.Error(w, "invalid_payload", http.StatusBadRequest)
			return
		}
		if err := rs.Validate(doc); err != nil {
			http.Error(w, "invalid_blocks", http.StatusBadRequest)
			return
		}
		if refuse != nil {
			if word := refuse(doc); word != "" {
				http.Error(w, word, http.StatusBadRequest)
				return
			}
		}
		s.posted <- doc
		_, _ = io.WriteString(w, "ok")
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func sectionText(t *testing.T, doc map[string]any) map[string]any {
	t.Helper()
	blocks, _ := doc["blocks"].([]any)
	for _, b := range blocks {
		if b := b.(map[string]any); b["type"] == "section" {
			return b["text"].(map[string]any)
		}
	}
	t.Fatalf("no section in %v", doc)
	return nil
}

// brokenEntity reports an '&' that does not start one of the three
// entities.
func brokenEntity(s string) bool {
	return strings.Contains(strings.NewReplacer("&amp;", "", "&lt;", "", "&gt;", "").Replace(s), "&")
}

// TestSlackLimitsAfterEscaping: the agent's text is escaped and then cut,
// so that text of '&', '<', '>' and characters outside the BMP stays
// within the 3,000-character section limit, cut at a character boundary
// and never inside an entity; it is verbatim, so that a bare URL does not
// become a link. A Slack stand-in that checks Block Kit takes each one.
func TestSlackLimitsAfterEscaping(t *testing.T) {
	t.Parallel()
	standIn := newSlackStandIn(t, nil)
	s := &notify.Slack{URL: standIn.srv.URL + "/services/T0/B0/x", Client: notify.HTTPClient()}
	for name, msg := range map[string]string{
		"ampersands":  strings.Repeat("&", 3100),
		"angles":      strings.Repeat("<>", 1600),
		"mixed":       strings.Repeat("a&b<c>é😀", 700),
		"just within": strings.Repeat("x", 2995) + "&",
		"bare url":    "approve https://evil.example/x and #general",
	} {
		n := sampleNotice(elicitation.EventCreated)
		n.Message = msg
		if err := s.Send(context.Background(), n); err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		doc := <-standIn.posted
		sec := sectionText(t, doc)
		text := sec["text"].(string)
		if sec["verbatim"] != true || len(doc["blocks"].([]any)) < 3 {
			t.Errorf("%s: the section is not verbatim, or Slack got the fallback: %v", name, doc)
		}
		if u := utf16.Encode([]rune(text)); len(u) > 3000 {
			t.Errorf("%s: section of %d UTF-16 units", name, len(u))
		}
		if !utf8.ValidString(text) || brokenEntity(text) {
			t.Errorf("%s: cut inside a character or an entity: %q", name, text)
		}
		if name == "just within" && text != strings.Repeat("x", 2995)+"&amp;" {
			t.Errorf("%s: 3,000 characters after escaping were cut: ends %q", name, text[len(text)-12:])
		}
		if name == "bare url" && text != msg {
			t.Errorf("bare url: %q", text)
		}
	}
}

// TestSlackRefusalDoesNotLoseTheNotice: when Slack refuses the blocks
// (400), the notice goes again as plain text with the review link; when
// Slack refuses that too, the failure is permanent and names Slack's
// error words (for the audit trail).
func TestSlackRefusalDoesNotLoseTheNotice(t *testing.T) {
	t.Parallel()
	oneBlock := newSlackStandIn(t, func(doc map[string]any) string {
		if len(doc["blocks"].([]any)) > 1 {
			return "invalid_blocks"
		}
		return ""
	})
	s := &notify.Slack{URL: oneBlock.srv.URL + "/services/T0/B0/x", Client: notify.HTTPClient()}
	n := sampleNotice(elicitation.EventCreated)
	if err := s.Send(context.Background(), n); err != nil {
		t.Fatalf("refused blocks, then fallback: %v", err)
	}
	text := sectionText(t, <-oneBlock.posted)["text"].(string)
	if !strings.Contains(text, n.ReviewURL) || !strings.Contains(text, "Deploy api v1.3") {
		t.Errorf("fallback %q lacks the link or the message", text)
	}
	none := newSlackStandIn(t, func(map[string]any) string { return "invalid_payload" })
	err := (&notify.Slack{URL: none.srv.URL + "/services/T0/B0/x", Client: notify.HTTPClient()}).Send(context.Background(), n)
	se := notify.Reason(err)
	if err == nil || !se.Permanent || se.Reason != "HTTP 400 invalid_payload, and the plain-text fallback: HTTP 400 invalid_payload" {
		t.Errorf("refused twice: %v", err)
	}
}

// TestSlackInteractiveBlockKit: the interactive message fits Block Kit's
// limits with the longest and most hostile options, and carries decision
// buttons only where the request can be decided in Slack.
func TestSlackInteractiveBlockKit(t *testing.T) {
	t.Parallel()
	rs := blockKit(t)
	long := strings.Repeat("<!here> ☃ ", 400)
	var opts []elicitation.Option
	for i := range notify.MaxSlackOptions {
		opts = append(opts, elicitation.Option{ID: strings.Repeat("i", 200) + string(rune('a'+i)), Label: long})
	}
	n := sampleNotice(elicitation.EventCreated)
	cases := map[string]struct {
		kind     elicitation.Kind
		c        *elicitation.Choices
		standing time.Duration // how long Approve for… approves
		buttons  int
	}{
		"approval":         {elicitation.KindApproval, &elicitation.Choices{Approvals: 10, Approvers: []string{long}}, time.Hour, 4},
		"standing":         {elicitation.KindApproval, &elicitation.Choices{Standing: true}, time.Hour, 5},
		"standing, capped": {elicitation.KindApproval, &elicitation.Choices{Standing: true}, 15 * time.Minute, 5},
		"no sign-in":       {elicitation.KindApproval, &elicitation.Choices{Standing: true}, 0, 4},
		"form":             {elicitation.KindApproval, &elicitation.Choices{FormRequired: true, Standing: true}, time.Hour, 1},
		"single of five":   {elicitation.KindSelection, &elicitation.Choices{Options: opts, MinSelections: 1, MaxSelections: 1}, time.Hour, 7},
		"multiple":         {elicitation.KindSelection, &elicitation.Choices{Options: opts, MinSelections: 1, MaxSelections: 5}, time.Hour, 3},
		"six":              {elicitation.KindSelection, &elicitation.Choices{Options: append(opts, opts[0]), MinSelections: 1, MaxSelections: 1}, time.Hour, 1},
		"no choices (old)": {elicitation.KindApproval, nil, time.Hour, 1},
	}
	for name, tc := range cases {
		n.Kind, n.Choices = tc.kind, tc.c
		b, _ := json.Marshal(notify.SlackInteractiveMessage(n, tc.standing))
		var doc any
		_ = json.Unmarshal(b, &doc)
		if err := rs.Validate(doc); err != nil {
			t.Errorf("%s: not Block Kit: %v", name, err)
		}
		if got := strings.Count(string(b), `"type":"button"`); got != tc.buttons {
			t.Errorf("%s: %d buttons, want %d", name, got, tc.buttons)
		}
		for _, text := range mrkdwnTexts(doc) {
			if strings.Contains(text, "<!here>") {
				t.Errorf("%s: a mention reached mrkdwn unescaped: %.80s", name, text)
			}
		}
	}
}

// mrkdwnTexts are the texts of every mrkdwn object in v.
func mrkdwnTexts(v any) []string {
	var out []string
	switch x := v.(type) {
	case map[string]any:
		if x["type"] == "mrkdwn" {
			s, _ := x["text"].(string)
			out = append(out, s)
		}
		for _, e := range x {
			out = append(out, mrkdwnTexts(e)...)
		}
	case []any:
		for _, e := range x {
			out = append(out, mrkdwnTexts(e)...)
		}
	}
	return out
}

// TestSlackStandingButton: Approve for… lasts an hour, or the operator's
// shorter cap, and says so; without sign-in (a cap of 0) there is none.
func TestSlackStandingButton(t *testing.T) {
	t.Parallel()
	n := sampleNotice(elicitation.EventCreated)
	n.Kind, n.Choices = elicitation.KindApproval, &elicitation.Choices{Standing: true}
	for _, tc := range []struct {
		maxTTL time.Duration
		want   time.Duration
		label  string
	}{
		{24 * time.Hour, time.Hour, "Approve for 1 hour"},
		{time.Hour, time.Hour, "Approve for 1 hour"},
		{15 * time.Minute, 15 * time.Minute, "Approve for 15 minutes"},
		{0, 0, ""},
	} {
		d := notify.SlackStanding(tc.maxTTL)
		if d != tc.want {
			t.Errorf("SlackStanding(%s) = %s, want %s", tc.maxTTL, d, tc.want)
		}
		b, _ := json.Marshal(notify.SlackInteractiveMessage(n, d))
		has := strings.Contains(string(b), `"action_id":"`+notify.SlackActionApproveStanding+`"`)
		if has != (tc.label != "") || tc.label != "" && !strings.Contains(string(b), `"text":"`+tc.label+`"`) {
			t.Errorf("cap %s: the message %s, want the button %q", tc.maxTTL, b, tc.label)
		}
	}
}
