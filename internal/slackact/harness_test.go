package slackact_test

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/boltstore"
	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/notify"
	"github.com/mcp-elicitation/elicitation/internal/ratelimit"
	"github.com/mcp-elicitation/elicitation/internal/review"
	"github.com/mcp-elicitation/elicitation/internal/slackact"
	"github.com/mcp-elicitation/elicitation/internal/slackact/slacktest"
	"github.com/mcp-elicitation/elicitation/internal/testclock"
)

const (
	signingSecret = "8f742231b10e8888abcd99yyyzzz85a5"
	botToken      = "xoxb-17653672481-19874698323-pdFZKVeTuE8sk7oOcBrzbqgy"
	team          = "T0TEAM0001"
)

var t0 = time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)

// slackSide is a stand-in for Slack: it takes incoming-webhook messages,
// answers views.open and users.info (checking the bot token), records
// every message posted to a response_url, and sends interaction requests
// to the service signed as Slack signs them.
type slackSide struct {
	t       *testing.T
	srv     *httptest.Server
	clock   *testclock.Clock
	emails  map[string]string // Slack user id -> profile e-mail (users.info)
	target  string            // the interactivity request URL
	mu      sync.Mutex
	posted  []map[string]any            // incoming-webhook messages
	views   []openedView                // views.open calls
	replies map[string][]map[string]any // response_url path -> messages posted to it
	seq     int
}

type openedView struct {
	Trigger string         `json:"trigger_id"`
	View    map[string]any `json:"view"`
}

func newSlackSide(t *testing.T, c *testclock.Clock) *slackSide {
	s := &slackSide{t: t, clock: c, emails: map[string]string{}, replies: map[string][]map[string]any{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *slackSide) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case strings.HasPrefix(r.URL.Path, "/services/"):
		var m map[string]any
		if json.Unmarshal(body, &m) != nil {
			http.Error(w, "invalid_payload", http.StatusBadRequest)
			return
		}
		s.posted = append(s.posted, m)
		_, _ = io.WriteString(w, "ok")
	case strings.HasPrefix(r.URL.Path, "/api/"):
		// Slack takes the token as a bearer header or a form field.
		form, _ := url.ParseQuery(string(body))
		if r.Header.Get("Authorization") != "Bearer "+botToken && form.Get("token") != botToken {
			_, _ = io.WriteString(w, `{"ok":false,"error":"invalid_auth"}`)
			return
		}
		s.api(w, strings.TrimPrefix(r.URL.Path, "/api/"), body)
	case strings.HasPrefix(r.URL.Path, "/actions/"):
		var m map[string]any
		if json.Unmarshal(body, &m) != nil {
			http.Error(w, "invalid_payload", http.StatusBadRequest)
			return
		}
		s.replies[r.URL.Path] = append(s.replies[r.URL.Path], m)
		_, _ = io.WriteString(w, "ok")
	default:
		http.NotFound(w, r)
	}
}

func (s *slackSide) api(w http.ResponseWriter, method string, body []byte) {
	switch method {
	case "views.open":
		var v openedView
		if json.Unmarshal(body, &v) != nil || v.Trigger == "" || v.View["type"] != "modal" {
			_, _ = io.WriteString(w, `{"ok":false,"error":"invalid_arguments"}`)
			return
		}
		s.views = append(s.views, v)
		_, _ = io.WriteString(w, `{"ok":true,"view":{"id":"V`+strconv.Itoa(len(s.views))+`"}}`)
	case "users.info":
		q, _ := url.ParseQuery(string(body))
		email, ok := s.emails[q.Get("user")]
		if !ok {
			_, _ = io.WriteString(w, `{"ok":false,"error":"user_not_found"}`)
			return
		}
		b, _ := json.Marshal(map[string]any{"ok": true, "user": map[string]any{"id": q.Get("user"), "profile": map[string]any{"email": email}}})
		_, _ = w.Write(b)
	default:
		_, _ = io.WriteString(w, `{"ok":false,"error":"unknown_method"}`)
	}
}

// lastPosted is the last incoming-webhook message.
func (s *slackSide) lastPosted() map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.posted) == 0 {
		s.t.Fatal("nothing was posted to the incoming webhook")
	}
	return s.posted[len(s.posted)-1]
}

func (s *slackSide) repliesTo(responseURL string) []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	u, _ := url.Parse(responseURL)
	return append([]map[string]any(nil), s.replies[u.Path]...)
}

func (s *slackSide) openedViews() []openedView {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]openedView(nil), s.views...)
}

// interaction is one request as Slack would send it.
type interaction struct {
	body        string // the form-encoded body (payload=…)
	responseURL string
	trigger     string
}

// send posts an interaction signed at the clock's time (shifted by skew)
// with secret, and returns the service's status and body.
func (s *slackSide) send(in interaction, secret string, skew time.Duration) (int, string) {
	s.t.Helper()
	ts := s.clock.Now().Add(skew).Unix()
	req, err := http.NewRequest(http.MethodPost, s.target, strings.NewReader(in.body))
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Slack-Request-Timestamp", strconv.FormatInt(ts, 10))
	req.Header.Set("X-Slack-Signature", slacktest.Sign(secret, ts, in.body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func (s *slackSide) next() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	return s.seq
}

func formBody(payload map[string]any) string {
	b, _ := json.Marshal(payload)
	return url.Values{"payload": {string(b)}}.Encode()
}

func slackUser(id string) map[string]any {
	return map[string]any{"id": id, "username": strings.ToLower(id), "name": strings.ToLower(id), "team_id": team}
}

// press is the block_actions interaction of user pressing the button
// action of msg (a message the incoming webhook took), as Slack builds it.
func (s *slackSide) press(msg map[string]any, action, user string) interaction {
	s.t.Helper()
	btn := findButton(msg, action)
	if btn == nil {
		s.t.Fatalf("the message has no button %q: %s", action, jsonText(msg))
	}
	n := s.next()
	in := interaction{responseURL: fmt.Sprintf("%s/actions/T0TEAM0001/%d/resp%d", s.srv.URL, 1000+n, n), trigger: fmt.Sprintf("%d.trigger.%d", 1000+n, n)}
	stamp := fmt.Sprintf("%d.%06d", s.clock.Now().Unix(), n)
	in.body = formBody(map[string]any{
		"type": "block_actions", "api_app_id": "A0APP0001", "token": "legacy-verification-token",
		"team": map[string]any{"id": team, "domain": "example"}, "user": slackUser(user),
		"container":    map[string]any{"type": "message", "message_ts": "1764666000.000100", "channel_id": "C0CHAN0001", "is_ephemeral": false},
		"trigger_id":   in.trigger,
		"channel":      map[string]any{"id": "C0CHAN0001", "name": "approvals"},
		"message":      map[string]any{"type": "message", "ts": "1764666000.000100", "text": msg["text"], "blocks": msg["blocks"]},
		"response_url": in.responseURL,
		"actions": []any{map[string]any{
			"type": "button", "action_id": btn["action_id"], "block_id": "b", "text": btn["text"], "value": btn["value"], "action_ts": stamp,
		}},
	})
	return in
}

// submitView is the view_submission of the dialog v by user with the
// given comment and checked option values.
func (s *slackSide) submitView(v openedView, user, comment string, checked ...string) interaction {
	n := s.next()
	values := map[string]any{"comment": map[string]any{"comment": map[string]any{"type": "plain_text_input", "value": comment}}}
	if len(checked) > 0 {
		var sel []any
		for _, c := range checked {
			sel = append(sel, map[string]any{"text": map[string]any{"type": "plain_text", "text": c}, "value": c})
		}
		values["options"] = map[string]any{"options": map[string]any{"type": "checkboxes", "selected_options": sel}}
	}
	view := map[string]any{}
	for k, val := range v.View {
		view[k] = val
	}
	view["id"] = "V0VIEW" + strconv.Itoa(n)
	view["hash"] = "1764666000.abc" + strconv.Itoa(n)
	view["state"] = map[string]any{"values": values}
	return interaction{body: formBody(map[string]any{
		"type": "view_submission", "api_app_id": "A0APP0001", "token": "legacy-verification-token",
		"team": map[string]any{"id": team, "domain": "example"}, "user": slackUser(user), "trigger_id": fmt.Sprintf("%d.trigger.v", 2000+n),
		"view": view,
	})}
}

func findButton(msg map[string]any, action string) map[string]any {
	blocks, _ := msg["blocks"].([]any)
	for _, b := range blocks {
		bm, _ := b.(map[string]any)
		els, _ := bm["elements"].([]any)
		for _, e := range els {
			em, _ := e.(map[string]any)
			if em["type"] == "button" && em["action_id"] == action {
				return em
			}
		}
	}
	return nil
}

func buttons(msg map[string]any) []string {
	var out []string
	blocks, _ := msg["blocks"].([]any)
	for _, b := range blocks {
		bm, _ := b.(map[string]any)
		els, _ := bm["elements"].([]any)
		for _, e := range els {
			if em, _ := e.(map[string]any); em["type"] == "button" {
				out = append(out, em["action_id"].(string))
			}
		}
	}
	return out
}

func jsonText(v any) string { b, _ := json.Marshal(v); return string(b) }

// env is a service with one interactive Slack target, the handler on a
// real listener, and the stand-in for Slack.
type env struct {
	t     *testing.T
	owner string // the principal whose agent creates the requests
	clock *testclock.Clock
	svc   *elicitation.Service
	store *boltstore.Store
	dlv   *notify.Deliverer
	slack *slackSide
}

type envOptions struct {
	signIn   bool
	users    map[string]notify.SlackUser
	teams    []string
	botToken string // default botToken
	owner    string // default deploy-bot
	// standing bounds standing approvals (with signIn).
	standing elicitation.StandingPolicy
	// decisions is the reviewers' share of decisions (nil: none).
	decisions *ratelimit.Limiter
}

func newEnv(t *testing.T, o envOptions) *env {
	t.Helper()
	e := &env{t: t, clock: testclock.New(t0), owner: cmp.Or(o.owner, "deploy-bot")}
	e.slack = newSlackSide(t, e.clock)
	st, err := boltstore.Open(filepath.Join(t.TempDir(), "store.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	e.store = st
	if o.users == nil {
		o.users = map[string]notify.SlackUser{
			"U0ALICE001":         {Reviewer: "alice@example.com"},
			"U0BOB00001":         {Reviewer: "Bob@Example.com", Groups: []string{"release"}},
			"carol@corp.example": {Reviewer: "carol@example.com"},
		}
	}
	cfg := notify.Config{
		Targets: map[string]notify.TargetConfig{"approvals": {Type: notify.TypeSlack, URL: e.slack.srv.URL + "/services/T0/B0/x", Interactive: true}},
		Slack:   notify.SlackAppConfig{Users: o.users, Teams: o.teams},
	}
	no := notify.Options{Now: e.clock.Now}
	if o.signIn {
		// As the deployment wires it (internal/compose/notifypart).
		no.SlackStandingFor = notify.SlackStanding(cmp.Or(o.standing.MaxTTL, elicitation.DefaultRuleMaxTTL))
	}
	targets, err := notify.New(cfg, no)
	if err != nil {
		t.Fatal(err)
	}
	e.svc = elicitation.NewService(elicitation.Config{Store: st, Now: e.clock.Now, Notifications: targets, SignIn: o.signIn,
		Policy: elicitation.ReviewerPolicy{BarOwner: true}, Standing: o.standing})
	e.dlv = &notify.Deliverer{Store: st, Targets: targets, Now: e.clock.Now, Log: slog.New(slog.DiscardHandler)}
	if o.botToken == "" {
		o.botToken = botToken
	}
	h, err := slackact.New(slackact.Options{
		Service: e.svc, SigningSecret: signingSecret, BotToken: o.botToken, APIURL: e.slack.srv.URL + "/api",
		Users: targets.SlackApp(), Now: e.clock.Now, Decisions: o.decisions,
	})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("POST "+slackact.Path, h)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	e.slack.target = srv.URL + slackact.Path
	return e
}

func (e *env) link(id, key string) string {
	return "https://elicitation.example.com" + review.Path(id, key)
}

// approval creates an approval notifying the Slack target and delivers
// its created notice: the message it returns is what Slack received.
func (e *env) approval(in elicitation.Input) (elicitation.Created, map[string]any) {
	e.t.Helper()
	in.Notify = elicitation.Notify{Targets: []string{"approvals"}, ReviewLink: e.link}
	if in.Message == "" {
		in.Message = "Deploy api v1.3 to production?"
	}
	if in.Context == nil && in.RequestedSchema == nil {
		in.Context = json.RawMessage(`{"service":"api","version":"1.3"}`)
	}
	c, err := e.svc.Create(context.Background(), e.owner, elicitation.KindApproval, in)
	if err != nil {
		e.t.Fatal(err)
	}
	return c, e.deliver()
}

func (e *env) selection(in elicitation.Input) (elicitation.Created, map[string]any) {
	e.t.Helper()
	in.Notify = elicitation.Notify{Targets: []string{"approvals"}, ReviewLink: e.link}
	if in.Message == "" {
		in.Message = "Which region takes the canary?"
	}
	c, err := e.svc.Create(context.Background(), e.owner, elicitation.KindSelection, in)
	if err != nil {
		e.t.Fatal(err)
	}
	return c, e.deliver()
}

func (e *env) deliver() map[string]any {
	e.t.Helper()
	if _, err := e.dlv.DeliverDue(context.Background()); err != nil {
		e.t.Fatal(err)
	}
	return e.slack.lastPosted()
}

func (e *env) state(id string) elicitation.State {
	e.t.Helper()
	st, err := e.svc.Status(context.Background(), e.owner, id)
	if err != nil {
		e.t.Fatal(err)
	}
	return st
}

// count is how many audit entries of id have action a.
func (e *env) count(id string, a elicitation.Action) int {
	e.t.Helper()
	tr, err := e.svc.OperatorAudit(context.Background(), id)
	if err != nil {
		e.t.Fatal(err)
	}
	n := tr.Omitted[a]
	for _, en := range tr.Entries {
		if en.Action == a {
			n++
		}
	}
	return n
}

func (e *env) ok(in interaction) string {
	e.t.Helper()
	code, body := e.slack.send(in, signingSecret, 0)
	if code != http.StatusOK {
		e.t.Fatalf("interaction answered %d %s", code, body)
	}
	return body
}

// refusedBy is the principals of id's refused submissions, in order.
func (e *env) refusedBy(id string) []string {
	e.t.Helper()
	tr, err := e.svc.OperatorAudit(context.Background(), id)
	if err != nil {
		e.t.Fatal(err)
	}
	var by []string
	for _, en := range tr.Entries {
		if en.Action == elicitation.ActionSubmissionRefused {
			by = append(by, en.Principal)
		}
	}
	return by
}
