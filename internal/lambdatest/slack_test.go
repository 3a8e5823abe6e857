//go:build unix

package lambdatest_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/mcp-elicitation/elicitation/internal/slackact/slacktest"
)

const slackSecretARN = "arn:aws:secretsmanager:us-east-1:123456789012:secret:mcp-elicitation-slack-MnOpQr"

// TestSlackOnLambda: the submit function, with the Slack app's secret
// read from Secrets Manager, takes interactions at POST
// /slack/interactions as API Gateway hands them over (the form body
// base64-encoded), signed as Slack signs them; a forged one gets 401. The
// request (events/mcp-elicit-approval.json) has a required form field, so
// an Approve press is refused with a note; Decline opens the dialog
// (views.open with the secret's bot token) and its submission declines,
// behind the function's IAM policy, and the message's update goes to the
// stand-in's response_url.
func TestSlackOnLambda(t *testing.T) {
	t.Parallel()
	const signing = "lambda-slack-signing-secret-0123"
	replies, views := make(chan map[string]any, 4), make(chan map[string]any, 4)
	slack := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m map[string]any
		_ = json.NewDecoder(r.Body).Decode(&m)
		switch {
		case strings.HasPrefix(r.URL.Path, "/actions/"):
			replies <- m
		case r.URL.Path == "/api/views.open" && r.Header.Get("Authorization") == "Bearer xoxb-lambda":
			views <- m
			_, _ = io.WriteString(w, `{"ok":true}`)
			return
		case strings.HasPrefix(r.URL.Path, "/api/"):
			_, _ = io.WriteString(w, `{"ok":false,"error":"invalid_auth"}`)
			return
		}
		_, _ = io.WriteString(w, "ok")
	}))
	defer slack.Close()
	notifyConfig := `{"targets":{"team":{"type":"slack","url":"https://hooks.slack.com/services/T/B/x","interactive":true}},"slack":{"users":{"U0ALICE001":"alice@example.com"}}}`
	s := newStack(t, stackOptions{
		allEnv:  []string{"ELICITATION_NOTIFY_CONFIG=" + notifyConfig, "ELICITATION_SLACK_SECRET_ARN=" + slackSecretARN, "ELICITATION_SLACK_API_URL=" + slack.URL + "/api"},
		secrets: map[string]string{slackSecretARN: `{"signingSecret":"` + signing + `","botToken":"xoxb-lambda"}`},
	})
	created := mustTool(t, s.fn["mcp"], event(t, "mcp-elicit-approval", phKey, s.keys["alice"]))
	press := func(action string) string {
		return slacktest.Press{Team: "T0TEAM0001", User: "U0ALICE001", ResponseURL: slack.URL + "/actions/T0TEAM0001/1/x", ActionID: action, Value: created.ReviewURL}.Body()
	}
	invoke := func(secret, body string) int {
		ts := time.Now().Unix()
		ev := events.APIGatewayV2HTTPRequest{
			Version: "2.0", RouteKey: "POST /slack/interactions", RawPath: "/slack/interactions",
			Headers: map[string]string{
				"content-type": "application/x-www-form-urlencoded", "x-slack-request-timestamp": strconv.FormatInt(ts, 10),
				"x-slack-signature": slacktest.Sign(secret, ts, body), "user-agent": "Slackbot 1.0 (+https://api.slack.com/robots)",
			},
			RequestContext: events.APIGatewayV2HTTPRequestContext{
				DomainName: "abc123.execute-api.us-east-1.amazonaws.com", Stage: "$default", RouteKey: "POST /slack/interactions",
				HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: http.MethodPost, Path: "/slack/interactions", Protocol: "HTTP/1.1", SourceIP: "3.0.0.1"},
			},
			Body: base64.StdEncoding.EncodeToString([]byte(body)), IsBase64Encoded: true,
		}
		b, _ := json.Marshal(ev)
		resp, _ := s.fn["submit"].Invoke(t, b)
		return resp.StatusCode
	}
	reply := func() map[string]any {
		select {
		case up := <-replies:
			return up
		case <-time.After(10 * time.Second):
			t.Fatal("no response_url message")
		}
		return nil
	}
	if code := invoke("a-forged-secret-0123456789abcd", press("elicitation.approve")); code != http.StatusUnauthorized {
		t.Fatalf("forged: %d", code)
	}
	if code := invoke(signing, press("elicitation.approve")); code != http.StatusOK {
		t.Fatalf("approve: %d\n%s", code, s.fn["submit"].Logs())
	}
	if up := reply(); up["response_type"] != "ephemeral" || !strings.Contains(fmt.Sprint(up["text"]), "requestedSchema") {
		t.Errorf("approving a request with a required field: %v", up)
	}
	if code := invoke(signing, press("elicitation.decline")); code != http.StatusOK {
		t.Fatalf("decline: %d\n%s", code, s.fn["submit"].Logs())
	}
	var opened map[string]any
	select {
	case opened = <-views:
	case <-time.After(10 * time.Second):
		t.Fatal("no views.open")
	}
	view, _ := opened["view"].(map[string]any)
	view["id"] = "V0LAMBDA01"
	view["state"] = map[string]any{"values": map[string]any{"comment": map[string]any{"comment": map[string]any{"type": "plain_text_input", "value": "wrong window"}}}}
	sub, _ := json.Marshal(map[string]any{"type": "view_submission", "team": map[string]any{"id": "T0TEAM0001"}, "user": map[string]any{"id": "U0ALICE001", "team_id": "T0TEAM0001"}, "view": view})
	if code := invoke(signing, url.Values{"payload": {string(sub)}}.Encode()); code != http.StatusOK {
		t.Fatalf("view_submission: %d\n%s", code, s.fn["submit"].Logs())
	}
	if up := reply(); up["replace_original"] != true || !strings.Contains(fmt.Sprint(up), "Decided by alice@example.com") {
		t.Errorf("update %v", up)
	}
	out, _ := tool(t, s.fn["mcp"], event(t, "mcp-elicit-status", phKey, s.keys["alice"], phID, created.ElicitationID))
	if out.Status != "declined" {
		t.Fatalf("status after the dialog: %+v", out)
	}
	if logs := s.fn["submit"].Logs(); strings.Contains(logs, signing) || strings.Contains(logs, "xoxb-lambda") {
		t.Error("the submit function logged the Slack secret")
	}
}
