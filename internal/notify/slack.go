package notify

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// Slack posts notices to a Slack incoming webhook as Block Kit messages:
// the headline, the request's message, who asked and until when, and a
// button to the review page.
type Slack struct {
	URL    string
	Client *http.Client
}

// Send implements Sender.
func (s *Slack) Send(ctx context.Context, n elicitation.Notice) error {
	body, err := json.Marshal(SlackMessage(n))
	if err != nil {
		return &SendError{Reason: "could not encode the message", Permanent: true}
	}
	return post(ctx, s.Client, s.URL, body, map[string]string{"Content-Type": "application/json"})
}

// slackEscape escapes the three characters Slack's mrkdwn gives meaning
// to, so that an agent's message cannot mention @channel or forge links.
var slackEscape = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// SlackMessage is the incoming-webhook payload for n.
func SlackMessage(n elicitation.Notice) map[string]any {
	title := Summary(Title(n), 150)
	blocks := []any{
		map[string]any{"type": "header", "text": map[string]any{"type": "plain_text", "text": title, "emoji": true}},
		map[string]any{"type": "section", "text": map[string]any{"type": "mrkdwn", "text": slackEscape.Replace(Summary(n.Message, 2900))}},
	}
	var ctxt []any
	for _, d := range Details(n) {
		ctxt = append(ctxt, map[string]any{"type": "mrkdwn", "text": slackEscape.Replace(d)})
	}
	if n.Event == elicitation.EventCreated {
		// Slack shows the expiry in the reader's own time zone.
		ctxt[1] = map[string]any{"type": "mrkdwn", "text": "Answer by <!date^" + strconv.FormatInt(n.ExpiresAt.Unix(), 10) + "^{date_short_pretty} {time}|" + stamp(n.ExpiresAt) + ">"}
	}
	blocks = append(blocks, map[string]any{"type": "context", "elements": ctxt})
	if u := string(safeURL(n.ReviewURL)); u != "" && len(u) <= 3000 {
		blocks = append(blocks, map[string]any{"type": "actions", "elements": []any{map[string]any{
			"type": "button", "action_id": "review", "style": "primary", "url": u,
			"text": map[string]any{"type": "plain_text", "text": "Review and decide", "emoji": true},
		}}})
	}
	return map[string]any{"text": title + ": " + slackEscape.Replace(Summary(firstLine(n.Message), 200)), "blocks": blocks}
}
