// Package slacktest plays Slack's side of an interaction in tests: it
// signs a request body as Slack signs it (written here from Slack's
// description, not from the verifier, so that a test of the verifier is
// not the verifier checking itself) and builds the form body of a button
// press.
package slacktest

import (
	"cmp"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
)

// Sign returns the X-Slack-Signature Slack sends with body at the Unix
// time ts (X-Slack-Request-Timestamp): "v0=" and the hex HMAC-SHA256,
// keyed by the app's signing secret, of "v0:{ts}:{body}".
func Sign(secret string, ts int64, body string) string {
	mac := hmac.New(sha256.New, []byte(secret))
	fmt.Fprintf(mac, "v0:%d:%s", ts, body)
	return "v0=" + hex.EncodeToString(mac.Sum(nil))
}

// Press is a block_actions interaction: user of team pressed the button
// actionID carrying value on a message whose response_url is responseURL.
// BlockID is the button's actions block; default elicitation.decide (Slack
// always names it, making one up for a block that has none).
type Press struct {
	Team, User, ResponseURL, ActionID, Value, BlockID string
}

// Body returns the request body Slack posts for p: a form with the
// payload field holding the interaction's JSON.
func (p Press) Body() string {
	payload, _ := json.Marshal(map[string]any{
		"type": "block_actions", "team": map[string]any{"id": p.Team}, "user": map[string]any{"id": p.User, "team_id": p.Team},
		"trigger_id": "1.2.3", "response_url": p.ResponseURL, "container": map[string]any{"message_ts": "1.1"},
		"actions": []any{map[string]any{"action_id": p.ActionID, "block_id": cmp.Or(p.BlockID, "elicitation.decide"), "value": p.Value, "action_ts": "1764666000.1", "type": "button"}},
	})
	return url.Values{"payload": {string(payload)}}.Encode()
}
