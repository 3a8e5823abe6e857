package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/slackact/slacktest"
	"github.com/mcp-elicitation/elicitation/receipt"
)

// TestServeSlackDecision: "elicitation serve" with a Slack app posts the
// interactive message to the incoming webhook, takes the Approve press
// Slack signs and sends to /slack/interactions on the review listener,
// records it as the mapped reviewer's decision (decidedVia slack) and
// updates the message through response_url. A stand-in plays Slack.
func TestServeSlackDecision(t *testing.T) {
	const signing = "serve-slack-signing-secret-0123"
	messages, replies := make(chan map[string]any, 4), make(chan map[string]any, 4)
	slack := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m map[string]any
		_ = json.NewDecoder(r.Body).Decode(&m)
		switch {
		case strings.HasPrefix(r.URL.Path, "/services/"):
			messages <- m
		case strings.HasPrefix(r.URL.Path, "/actions/"):
			replies <- m
		}
		_, _ = io.WriteString(w, "ok")
	}))
	defer slack.Close()
	cfgDoc := `{"targets":{"team":{"type":"slack","url":"` + slack.URL + `/services/T/B/x","interactive":true}},"slack":{"users":{"U0ALICE001":"alice@example.com"}}}`
	cfg, err := parseServe([]string{"--addr", "127.0.0.1:0", "--data-dir", t.TempDir(), "--log-level", "warn", "--notify-config", cfgDoc,
		"--notify-interval", "100ms", "--slack-signing-secret", signing, "--slack-bot-token", "xoxb-test", "--slack-api-url", slack.URL + "/api"}, io.Discard, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	m, err := Start(context.Background(), cfg, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	s := agent(t, m.MCPURL)
	created := call(t, s, "elicit_approval", map[string]any{"message": "Rotate the prod DB password?", "context": map[string]any{"db": "prod"}, "notify": []string{"team"}})
	id := created["elicitationId"].(string)
	var msg map[string]any
	select {
	case msg = <-messages:
	case <-time.After(10 * time.Second):
		t.Fatal("no Slack message")
	}
	var approve map[string]any
	for _, b := range msg["blocks"].([]any) {
		for _, e := range asList(b.(map[string]any)["elements"]) {
			if em := e.(map[string]any); em["action_id"] == "elicitation.approve" {
				approve = em
			}
		}
	}
	if approve == nil {
		t.Fatalf("no Approve button: %v", msg)
	}
	body := slacktest.Press{Team: "T0TEAM0001", User: "U0ALICE001", ResponseURL: slack.URL + "/actions/T0TEAM0001/1/x", ActionID: "elicitation.approve", Value: fmt.Sprint(approve["value"])}.Body()
	post := func(secret string) int {
		ts := time.Now().Unix()
		req, _ := http.NewRequest(http.MethodPost, m.ReviewBase+"/slack/interactions", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("X-Slack-Request-Timestamp", strconv.FormatInt(ts, 10))
		req.Header.Set("X-Slack-Signature", slacktest.Sign(secret, ts, body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := post("a-forged-secret-0123456789abcd"); code != http.StatusUnauthorized {
		t.Fatalf("forged: %d", code)
	}
	if code := post(signing); code != http.StatusOK {
		t.Fatalf("signed: %d", code)
	}
	select {
	case up := <-replies:
		if up["replace_original"] != true || !strings.Contains(fmt.Sprint(up), "Decided by alice@example.com") {
			t.Errorf("update %v", up)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no response_url update")
	}
	res := call(t, s, "elicit_result", map[string]any{"elicitationId": id})
	if res["decision"] != "submitted" || res["decidedVia"] != "slack" {
		t.Fatalf("result %v", res)
	}
	// The receipt attests the Slack press: the mapped reviewer, the channel.
	tok, _ := res["receipt"].(string)
	r := verified(t, m, tok, receipt.Expect{Txn: id, Outcome: receipt.OutcomeApproved})
	if a := r.Approvers; len(a) != 1 || a[0].Principal != "alice@example.com" || a[0].Via != "slack" || a[0].Anonymous {
		t.Errorf("receipt of a Slack decision: approvers %+v", a)
	}
}

func asList(v any) []any { l, _ := v.([]any); return l }

// TestServeSlackNeedsMapping: a Slack app without the users' mapping is a
// start-up error, not a route nobody can decide through.
func TestServeSlackNeedsMapping(t *testing.T) {
	cfg, err := parseServe([]string{"--addr", "127.0.0.1:0", "--data-dir", t.TempDir(), "--log-level", "warn",
		"--slack-signing-secret", "s", "--slack-bot-token", "xoxb-test"}, io.Discard, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	m, err := Start(context.Background(), cfg, io.Discard)
	if err == nil {
		m.Close()
		t.Fatal("started")
	}
	if !strings.Contains(err.Error(), "maps no Slack users") {
		t.Errorf("error %v", err)
	}
	if _, err := parseServe([]string{"--slack-signing-secret", "s"}, io.Discard, noEnv); err == nil || !strings.Contains(err.Error(), "go together") {
		t.Errorf("a signing secret without the bot token: %v", err)
	}
}
