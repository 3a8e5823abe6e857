package slackact_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/notify"
	"github.com/mcp-elicitation/elicitation/internal/slackact"
	"github.com/mcp-elicitation/elicitation/internal/slackact/slacktest"
)

// FuzzVerify checks the signature check against Slack's own description
// (slacktest.Sign): a body signed with the secret within the window is
// accepted; the same signature over another body, with another secret, or
// outside the window is refused with the named error, never accepted.
func FuzzVerify(f *testing.F) {
	f.Add(signingSecret, "payload=%7B%7D", "payload=%7B%22x%22%7D", int64(0), "")
	f.Add("s", "", "x", int64(301), "v0=")
	f.Add("s", "a", "a", int64(-300), "v1=00")
	f.Add("", "b", "c", int64(1<<62), "v0=zz")
	now := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, secret, body, other string, skew int64, forged string) {
		ts := now.Unix() + skew
		if skew > 1<<40 || skew < -(1<<40) {
			ts = skew // whole timestamps, far from now, also as Slack would never send them
		}
		h := http.Header{}
		h.Set("X-Slack-Request-Timestamp", strconv.FormatInt(ts, 10))
		h.Set("X-Slack-Signature", slacktest.Sign(secret, ts, body))
		fresh := ts >= now.Unix()-300 && ts <= now.Unix()+300
		err := slackact.Verify([]byte(secret), h, []byte(body), now)
		switch {
		case fresh && err != nil:
			t.Fatalf("a fresh signed body refused: %v", err)
		case !fresh && !errors.Is(err, slackact.ErrStale):
			t.Fatalf("a body signed %d s away: %v, want ErrStale", ts-now.Unix(), err)
		}
		if other != body {
			if err := slackact.Verify([]byte(secret), h, []byte(other), now); err == nil {
				t.Fatalf("the signature of %q accepted for %q", body, other)
			}
		}
		if forged != h.Get("X-Slack-Signature") {
			h.Set("X-Slack-Signature", forged)
			err := slackact.Verify([]byte(secret), h, []byte(body), now)
			if !errors.Is(err, slackact.ErrSignature) && !errors.Is(err, slackact.ErrStale) && !errors.Is(err, slackact.ErrUnsigned) {
				t.Fatalf("forged signature %q: %v, want a refusal", forged, err)
			}
		}
	})
}

// recorder is the Service the interactions fuzz drives: a pending
// approval at any id ending in "a", else a selection of three options; it
// records every Submit.
type recorder struct {
	mu   sync.Mutex
	subs []elicitation.Submission
}

var fuzzOptions = []elicitation.Option{{ID: "a"}, {ID: "b"}, {ID: "c"}}

func (r *recorder) Submit(_ context.Context, id, key string, sub elicitation.Submission) (elicitation.State, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.subs = append(r.subs, sub)
	return elicitation.State{ID: id, Status: elicitation.StatusSubmitted}, nil
}

func (r *recorder) Receipt(_ context.Context, id, key string) (elicitation.Review, error) {
	at := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	st := elicitation.State{ID: id, Kind: elicitation.KindSelection, Status: elicitation.StatusPending, Owner: "agent", CreatedAt: at, ExpiresAt: at.Add(time.Hour)}
	p := elicitation.Payload{Message: "Pick", Options: fuzzOptions, MinSelections: 1, MaxSelections: 2}
	if strings.HasSuffix(id, "a") {
		st.Kind, p = elicitation.KindApproval, elicitation.Payload{Message: "Allow?", Context: json.RawMessage(`{"tool":"deploy","arguments":{"env":"x"}}`)}
	}
	return elicitation.Review{Record: elicitation.Record{State: st, Payload: p}, Now: at}, nil
}

func (r *recorder) MayDecide(context.Context, string, string) (elicitation.State, error) {
	return elicitation.State{}, nil
}

func (r *recorder) StandingMaxTTL() time.Duration { return time.Hour }

// hostsOnly is a transport that records every host the handler calls.
type hostsOnly struct {
	mu    sync.Mutex
	hosts []string
}

func (h *hostsOnly) RoundTrip(r *http.Request) (*http.Response, error) {
	h.mu.Lock()
	h.hosts = append(h.hosts, r.URL.Host)
	h.mu.Unlock()
	return http.DefaultTransport.RoundTrip(r)
}

// FuzzInteraction sends arbitrary interaction payloads, signed as Slack
// signs them, from the one mapped user: the handler answers 200 or 400
// (an answer with a body is the dialog's errors), calls no host but the
// Slack it was given, and every decision it sends is the mapped
// reviewer's, from Slack, submitted or declined, picking only the
// request's own options, at most once per interaction.
func FuzzInteraction(f *testing.F) {
	link := "https://review.example.com/review/req-1a/key-1"
	press := func(action, value string) string {
		b, _ := json.Marshal(map[string]any{"type": "block_actions", "team": map[string]any{"id": team}, "user": map[string]any{"id": "U1", "team_id": team},
			"trigger_id": "1.2.3", "response_url": "RESP/actions/1", "container": map[string]any{"message_ts": "1.1"},
			"actions": []any{map[string]any{"type": "button", "block_id": "elicitation.decide", "action_id": action, "value": value, "action_ts": "1.2"}}})
		return string(b)
	}
	view := func(action, link string, checked ...string) string {
		meta, _ := json.Marshal(map[string]string{"u": link, "r": "RESP/actions/2", "a": action})
		var sel []any
		for _, c := range checked {
			sel = append(sel, map[string]any{"value": c})
		}
		b, _ := json.Marshal(map[string]any{"type": "view_submission", "team": map[string]any{"id": team}, "user": map[string]any{"id": "U1"},
			"view": map[string]any{"id": "V1", "callback_id": slackact.CallbackID, "private_metadata": string(meta), "state": map[string]any{"values": map[string]any{
				"comment": map[string]any{"comment": map[string]any{"value": "why"}}, "options": map[string]any{"options": map[string]any{"selected_options": sel}}}}}})
		return string(b)
	}
	for _, s := range []string{
		press(notify.SlackActionApprove, link), press(notify.SlackActionApproveStanding, link),
		press(notify.SlackActionSelect+"1", "https://review.example.com/review/req-2/key-2"), press(notify.SlackActionSelect+"01", link),
		press(notify.SlackActionSelect+"-1", link), press(notify.SlackActionDecline, "http://x/review/%zz/k"), press(notify.SlackActionChoose, link),
		view(notify.SlackActionDecline, link), view(notify.SlackActionChoose, "https://r/review/s/k", "0", "2"), view(notify.SlackActionChoose, "https://r/review/s/k", "3"),
		view(notify.SlackActionApproveComment, link), `{"type":"view_closed"}`, `{"type":"block_actions","actions":[]}`, `[`, ``,
	} {
		f.Add(s)
	}
	slack := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		_, _ = io.WriteString(w, `{"ok":true,"view":{"id":"V1"},"user":{"id":"U1","profile":{"email":"u1@example.com"}}}`)
	}))
	f.Cleanup(slack.Close)
	now := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, payload string) {
		svc, tr := &recorder{}, &hostsOnly{}
		h, err := slackact.New(slackact.Options{Service: svc, SigningSecret: signingSecret, BotToken: botToken, APIURL: slack.URL + "/api",
			Users:  notify.SlackAppConfig{Users: map[string]notify.SlackUser{"U1": {Reviewer: "Rev@example.com"}}},
			Client: &http.Client{Transport: tr}, Now: func() time.Time { return now }})
		if err != nil {
			t.Fatal(err)
		}
		body := url.Values{"payload": {strings.ReplaceAll(payload, "RESP", slack.URL)}}.Encode()
		req := httptest.NewRequest(http.MethodPost, slackact.Path, strings.NewReader(body))
		req.Header.Set("X-Slack-Request-Timestamp", strconv.FormatInt(now.Unix(), 10))
		req.Header.Set("X-Slack-Signature", slacktest.Sign(signingSecret, now.Unix(), body))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		checkInteraction(t, w, svc, tr, strings.TrimPrefix(slack.URL, "http://"))
	})
}

// checkInteraction asserts FuzzInteraction's properties of one answer.
func checkInteraction(t *testing.T, w *httptest.ResponseRecorder, svc *recorder, tr *hostsOnly, slackHost string) {
	t.Helper()
	switch w.Code {
	case http.StatusOK:
		if w.Body.Len() > 0 {
			var ans struct {
				Action string            `json:"response_action"`
				Errors map[string]string `json:"errors"`
			}
			if err := json.Unmarshal(w.Body.Bytes(), &ans); err != nil || ans.Action != "errors" || len(ans.Errors) != 1 {
				t.Fatalf("answer %q is not the dialog's errors", w.Body)
			}
		}
	case http.StatusBadRequest:
	default:
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
	for _, host := range tr.hosts {
		if host != slackHost {
			t.Fatalf("the handler called %q, not Slack", host)
		}
	}
	if len(svc.subs) > 1 {
		t.Fatalf("%d decisions sent for one interaction", len(svc.subs))
	}
	for _, sub := range svc.subs {
		if sub.By != "rev@example.com" || sub.Via != elicitation.ViaSlack || !strings.HasPrefix(sub.ID, "slack-") ||
			(sub.Decision != elicitation.DecisionSubmitted && sub.Decision != elicitation.DecisionDeclined) {
			t.Fatalf("decision %+v", sub)
		}
		for _, id := range sub.SelectedIDs {
			if !slices.ContainsFunc(fuzzOptions, func(o elicitation.Option) bool { return o.ID == id }) {
				t.Fatalf("picked %q, not an option", id)
			}
		}
	}
}
