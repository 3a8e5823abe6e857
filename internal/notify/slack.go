package notify

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf16"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// Slack posts notices to a Slack incoming webhook as Block Kit messages:
// the headline, the request's message, who asked and until when, and a
// button to the review page.
type Slack struct {
	URL    string
	Client *http.Client
}

// Send implements Sender. If Slack refuses the message as such (HTTP 400:
// blocks it will not take, whatever the reason), the notice is sent again
// as plain text (SlackFallback: the headline, the message's first line and
// the review link), so that the reviewer is still told; only if that is
// refused too is the delivery given up, with Slack's error word in the
// audit trail.
func (s *Slack) Send(ctx context.Context, n elicitation.Notice) error {
	err := s.post(ctx, SlackMessage(n))
	var se *SendError
	if !errors.As(err, &se) || se.status != http.StatusBadRequest {
		return err
	}
	if ferr := s.post(ctx, SlackFallback(n)); ferr != nil {
		return &SendError{Reason: se.Reason + ", and the plain-text fallback: " + reasonOf(ferr).Reason, Permanent: reasonOf(ferr).Permanent}
	}
	return nil
}

func (s *Slack) post(ctx context.Context, msg map[string]any) error {
	body, err := json.Marshal(msg)
	if err != nil {
		return &SendError{Reason: "could not encode the message", Permanent: true}
	}
	return postWord(ctx, s.Client, s.URL, body, map[string]string{"Content-Type": "application/json"})
}

// slackEscape escapes the three characters Slack's mrkdwn gives meaning
// to, so that an agent's message cannot mention @channel or forge links.
var slackEscape = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// slackText is s (the agent's text) for a mrkdwn text object of at most
// max characters: escaped first, then cut (at a character boundary, never
// inside an entity, with "…"), so that the escaping cannot take it past
// Block Kit's limits. Characters are counted as UTF-16 code units, which
// is never fewer than Slack counts.
func slackText(s string, max int) string {
	s = strings.TrimSpace(s)
	esc := slackEscape.Replace(s)
	if units(esc) <= max {
		return esc
	}
	var b strings.Builder
	n := 0
	for _, r := range s {
		unit := slackEscape.Replace(string(r))
		if n+units(unit) > max-1 {
			break
		}
		b.WriteString(unit)
		n += units(unit)
	}
	return strings.TrimSpace(b.String()) + "…"
}

func units(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// agentText is a mrkdwn text object for text that comes from the agent or
// the request: verbatim, so that Slack does not turn bare URLs, channel
// names or mentions in it into links (escaping stops the explicit forms).
func agentText(s string, max int) map[string]any {
	return map[string]any{"type": "mrkdwn", "text": slackText(s, max), "verbatim": true}
}

// SlackMessage is the incoming-webhook payload for n.
func SlackMessage(n elicitation.Notice) map[string]any {
	title := Summary(Title(n), 150)
	blocks := []any{
		map[string]any{"type": "header", "text": map[string]any{"type": "plain_text", "text": title, "emoji": true}},
		map[string]any{"type": "section", "text": agentText(n.Message, 3000)},
	}
	var ctxt []any
	for _, d := range Details(n) {
		ctxt = append(ctxt, agentText(d, 2000))
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
	return map[string]any{"text": title + ": " + slackText(firstLine(n.Message), 200), "blocks": blocks}
}

// SlackFallback is the plain message sent when Slack refuses SlackMessage:
// the headline, the message's first line, and the review link, in one
// verbatim mrkdwn section well within every limit.
func SlackFallback(n elicitation.Notice) map[string]any {
	text := Summary(Title(n), 150) + ": " + slackText(firstLine(n.Message), 200)
	if u := string(safeURL(n.ReviewURL)); u != "" && len(u) <= 2000 {
		text += "\nReview and decide: <" + u + ">"
	}
	return map[string]any{"text": text, "blocks": []any{map[string]any{"type": "section", "text": map[string]any{"type": "mrkdwn", "text": text, "verbatim": true}}}}
}
