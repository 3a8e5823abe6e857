package notify

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"

	"github.com/slack-go/slack"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// Slack posts notices to a Slack incoming webhook as Block Kit messages:
// the headline, the request's message, who asked and until when, and a
// button to the review page.
type Slack struct {
	URL    string
	Client *http.Client
	// Interactive adds the buttons that decide in Slack
	// (SlackInteractiveMessage) to notices that carry a review link.
	Interactive bool
	// StandingFor is how long the standing approval that an interactive
	// message's Approve for… button makes lasts (SlackStanding); 0: no
	// such button.
	StandingFor time.Duration
}

// Send implements Sender. If Slack refuses the message as such (HTTP 400:
// blocks it will not take, whatever the reason), the notice is sent again
// as plain text (SlackFallback: the headline, the message's first line and
// the review link), so that the reviewer is still told; only if that is
// refused too is the delivery given up, with Slack's error word in the
// audit trail.
func (s *Slack) Send(ctx context.Context, n elicitation.Notice) error {
	msg := SlackMessage(n)
	if s.Interactive {
		msg = SlackInteractiveMessage(n, s.StandingFor)
	}
	err := s.post(ctx, msg)
	var se *SendError
	if !errors.As(err, &se) || se.status != http.StatusBadRequest {
		return err
	}
	if ferr := s.post(ctx, SlackFallback(n)); ferr != nil {
		fe := Reason(ferr)
		return &SendError{Reason: se.Reason + ", and the plain-text fallback: " + fe.Reason, Permanent: fe.Permanent}
	}
	return nil
}

func (s *Slack) post(ctx context.Context, msg *slack.WebhookMessage) error {
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
	return cutUnits(strings.TrimSpace(s), max, slackEscape.Replace)
}

// cutUnits is s with each character written as enc writes it, cut to at
// most max UTF-16 code units: at a character boundary, with "…".
func cutUnits(s string, max int, enc func(string) string) string {
	if all := enc(s); units(all) <= max {
		return all
	}
	var b strings.Builder
	n := 0
	for _, r := range s {
		unit := enc(string(r))
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

// SlackMessage is the incoming-webhook payload for n: slack-go's message
// and Block Kit blocks.
func SlackMessage(n elicitation.Notice) *slack.WebhookMessage { return slackMessage(n, false, 0) }

// SlackInteractiveMessage is the payload for n with the buttons that
// decide in Slack (SlackDecidable): Approve, Approve with comment and
// Decline for an approval, and Approve for 1 hour (a standing approval
// lasting standing, SlackStanding) where standing is not 0 and the
// approval may be made standing (Choices.Standing); a button per option
// and Decline for a single-choice selection; Choose (a dialog of
// checkboxes) and Decline for a multiple-choice one; and always the Review
// and decide link. Each decision button's value is the review URL, which
// the interaction handler reads the request and its key from.
func SlackInteractiveMessage(n elicitation.Notice, standing time.Duration) *slack.WebhookMessage {
	return slackMessage(n, true, standing)
}

func slackMessage(n elicitation.Notice, interactive bool, standing time.Duration) *slack.WebhookMessage {
	title := Summary(Title(n), 150)
	blocks := []slack.Block{
		slack.NewHeaderBlock(SlackPlain(title)),
		slack.NewSectionBlock(SlackAgentText(n.Message, 3000), nil, nil),
	}
	var ctxt []slack.MixedElement
	for _, d := range Details(n) {
		ctxt = append(ctxt, SlackAgentText(d, 2000))
	}
	if n.Event == elicitation.EventCreated {
		// Slack shows the expiry in the reader's own time zone.
		ctxt[1] = &slack.TextBlockObject{Type: slack.MarkdownType, Text: "Answer by <!date^" + strconv.FormatInt(n.ExpiresAt.Unix(), 10) + "^{date_short_pretty} {time}|" + stamp(n.ExpiresAt) + ">"}
	}
	if c := n.Choices; c != nil && c.Approvals > 1 {
		ctxt = append(ctxt, SlackAgentText(quorumLine(c), 2000))
	}
	blocks = append(blocks, slack.NewContextBlock("", ctxt...))
	if u := string(safeURL(n.ReviewURL)); u != "" && len(u) <= 2000 {
		link := slackButton(SlackActionReview, "Review and decide", "", slack.StylePrimary, nil)
		link.URL = u
		if interactive && SlackDecidable(n.Kind, n.Choices) {
			blocks = append(blocks, decisionBlocks(n, u, link, standing)...)
		} else {
			blocks = append(blocks, slack.NewActionBlock("", link))
		}
	}
	return &slack.WebhookMessage{Text: title + ": " + slackText(firstLine(n.Message), 200), Blocks: &slack.Blocks{BlockSet: blocks}}
}

// SlackFallback is the plain message sent when Slack refuses SlackMessage:
// the headline, the message's first line, and the review link, in one
// verbatim mrkdwn section well within every limit.
func SlackFallback(n elicitation.Notice) *slack.WebhookMessage {
	text := Summary(Title(n), 150) + ": " + slackText(firstLine(n.Message), 200)
	if u := string(safeURL(n.ReviewURL)); u != "" && len(u) <= 2000 {
		text += "\nReview and decide: <" + u + ">"
	}
	section := slack.NewSectionBlock(&slack.TextBlockObject{Type: slack.MarkdownType, Text: text, Verbatim: true}, nil, nil)
	return &slack.WebhookMessage{Text: text, Blocks: &slack.Blocks{BlockSet: []slack.Block{section}}}
}

// The action ids of an interactive message's buttons; each decision
// button's value is the review URL.
const (
	SlackActionReview         = "review"
	SlackActionApprove        = "elicitation.approve"
	SlackActionApproveComment = "elicitation.approve_comment"
	SlackActionDecline        = "elicitation.decline"
	// SlackActionChoose opens the dialog of a multiple-choice selection.
	SlackActionChoose = "elicitation.choose"
	// SlackActionSelect and the option's index (0-based) picks that
	// option of a single-choice selection.
	SlackActionSelect = "elicitation.select."
	// SlackActionApproveStanding approves and makes a standing approval:
	// for SlackStanding, SlackStandingUses uses, holding every field
	// elicitation.Payload.RuleFields names.
	SlackActionApproveStanding = "elicitation.approve_standing"
)

// The standing approval an interactive message's Approve for 1 hour makes.
const (
	// SlackStandingFor is how long it lasts, unless the operator's cap is
	// shorter (SlackStanding).
	SlackStandingFor = time.Hour
	// SlackStandingUses is how many later requests it may decide.
	SlackStandingUses = 10
)

// SlackStanding is how long the standing approval of the Approve for…
// button lasts under the operator's cap maxTTL (Service.StandingMaxTTL):
// SlackStandingFor, or maxTTL if shorter; 0 (no such button) for a cap of
// 0, where reviewers do not sign in.
func SlackStanding(maxTTL time.Duration) time.Duration {
	return max(min(SlackStandingFor, maxTTL), 0)
}

// MaxSlackOptions is the most options a selection may have to be decided
// in Slack; a larger one shows only Review and decide.
const MaxSlackOptions = 5

// SlackDecidable reports whether a request asking c can be decided with a
// Slack message's buttons: an approval whose form may be sent empty, or a
// selection of 1 to MaxSlackOptions options. Anything else (a form to
// fill, a long list to search) is answered on the review page.
func SlackDecidable(kind elicitation.Kind, c *elicitation.Choices) bool {
	switch {
	case c == nil:
		return false
	case kind == elicitation.KindApproval:
		return !c.FormRequired
	case kind == elicitation.KindSelection:
		return len(c.Options) >= 1 && len(c.Options) <= MaxSlackOptions && c.MaxSelections >= 1
	}
	return false
}

// SlackSingleChoice reports whether a selection asking c is picked with
// one button per option (at most one option may be picked).
func SlackSingleChoice(c *elicitation.Choices) bool { return c.MaxSelections == 1 }

func quorumLine(c *elicitation.Choices) string {
	line := "Needs " + strconv.Itoa(c.Approvals) + " approvals"
	if len(c.Approvers) > 0 {
		line += "; " + strconv.Itoa(len(c.Approvers)) + " so far: " + strings.Join(c.Approvers, ", ")
	}
	return line
}

// decisionBlocks are the buttons of an interactive message, and the link.
func decisionBlocks(n elicitation.Notice, u string, link *slack.ButtonBlockElement, standing time.Duration) []slack.Block {
	c := n.Choices
	decline := slackButton(SlackActionDecline, "Decline", u, slack.StyleDanger, nil)
	link.Style = ""
	if n.Kind == elicitation.KindApproval {
		approve := slackButton(SlackActionApprove, "Approve", u, slack.StylePrimary,
			slackConfirm("Approve this request?", "The agent goes ahead as asked. This is recorded under your name.", "Approve"))
		els := []slack.BlockElement{approve}
		if standing > 0 && c.Standing {
			els = append(els, standingButton(u, standing))
		}
		els = append(els, slackButton(SlackActionApproveComment, "Approve with comment", u, "", nil), decline, link)
		return []slack.Block{slack.NewActionBlock("elicitation.decide", els...)}
	}
	decline.Text = SlackPlain("None of these")
	if !SlackSingleChoice(c) {
		return []slack.Block{slack.NewActionBlock("elicitation.decide", slackButton(SlackActionChoose, "Choose…", u, slack.StylePrimary, nil), decline, link)}
	}
	var opts []slack.BlockElement
	for i, o := range c.Options {
		opts = append(opts, slackButton(SlackActionSelect+strconv.Itoa(i), plainCut(o.DisplayLabel(), 75), u, "",
			slackConfirm("Pick this option?", plainCut(o.DisplayLabel(), 300), "Pick it")))
	}
	return []slack.Block{
		slack.NewActionBlock("elicitation.options", opts...),
		slack.NewActionBlock("elicitation.decide", decline, link),
	}
}

// standingButton is Approve for…: it approves and makes a standing
// approval lasting d.
func standingButton(u string, d time.Duration) *slack.ButtonBlockElement {
	label := "Approve for " + elicitation.HumanDuration(d)
	return slackButton(SlackActionApproveStanding, label, u, "", slackConfirm(label+"?",
		"The agent goes ahead as asked. For "+elicitation.HumanDuration(d)+", up to "+strconv.Itoa(SlackStandingUses)+
			" later requests of the same agent that match this one (the same tool and arguments, or the same context) are approved in your name too, without asking. Revoke it in your inbox.",
		"Approve"))
}

func slackButton(action, text, value string, style slack.Style, confirm *slack.ConfirmationBlockObject) *slack.ButtonBlockElement {
	b := slack.NewButtonBlockElement(action, value, SlackPlain(text))
	b.Style, b.Confirm = style, confirm
	return b
}

func slackConfirm(title, text, yes string) *slack.ConfirmationBlockObject {
	return slack.NewConfirmationBlockObject(SlackPlain(title), &slack.TextBlockObject{Type: slack.PlainTextType, Text: text}, SlackPlain(yes), SlackPlain("Cancel"))
}

// plainCut is s (the agent's text) for a plain_text object of at most max
// characters (UTF-16 code units), cut with "…"; never empty.
func plainCut(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if s == "" {
		return "(no label)"
	}
	return cutUnits(s, max, func(s string) string { return s })
}

// SlackAgentText is the verbatim mrkdwn text object of s (the agent's
// text), escaped and cut to max characters (agentText).
func SlackAgentText(s string, max int) *slack.TextBlockObject {
	return &slack.TextBlockObject{Type: slack.MarkdownType, Text: slackText(s, max), Verbatim: true}
}

// SlackPlain is a plain_text object of text, emoji on.
func SlackPlain(text string) *slack.TextBlockObject {
	return slack.NewTextBlockObject(slack.PlainTextType, text, true, false)
}
