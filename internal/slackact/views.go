package slackact

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/slack-go/slack"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/notify"
)

// CallbackID names the decision dialog's view.
const CallbackID = "elicitation.decide"

// The dialog's input blocks (and their elements' action ids).
const (
	blockComment = "comment"
	blockOptions = "options"
)

// dialogMeta is what the dialog carries through Slack (private_metadata):
// the review URL of the request, the message's response_url and which
// button opened it.
type dialogMeta struct {
	Link        string `json:"u"`
	ResponseURL string `json:"r"`
	Action      string `json:"a"`
}

// openDialog opens the dialog of Decline, Approve with comment or Choose,
// once MayDecide says the user may decide the request (else they are told
// why, and a request decided meanwhile has its message updated). press is
// the button's submission: a user who may not decide has it refused, and
// audited, by Submit, as decide does.
func (h *Handler) openDialog(ctx context.Context, in *interaction, t target, action string, press elicitation.Submission) {
	if _, err := h.Service.MayDecide(ctx, t.id, t.key); err != nil {
		if refusesPresser(err) {
			_, err = h.Service.Submit(ctx, t.id, t.key, press)
		}
		h.refused(ctx, in.ResponseURL, t, err)
		return
	}
	rv, err := h.Service.Receipt(ctx, t.id, t.key)
	if err != nil {
		h.refused(ctx, in.ResponseURL, t, err)
		return
	}
	meta, _ := json.Marshal(dialogMeta{Link: t.link, ResponseURL: in.ResponseURL, Action: action})
	if len(meta) > 3000 {
		h.ephemeral(ctx, in.ResponseURL, "This request cannot be decided in Slack. Use Review and decide.")
		return
	}
	if err := h.api.openView(ctx, in.TriggerID, DialogView(rv.Record, action, string(meta))); err != nil {
		h.Logger.WarnContext(ctx, "slack interaction: the dialog could not be opened", "elicitationId", t.id, "err", err)
		h.ephemeral(ctx, in.ResponseURL, "The dialog could not be opened. Try again, or use Review and decide.")
	}
}

// DialogView is the modal of the button action for rec: a comment box
// (required for Approve with comment, optional for Decline), and for
// Choose the options as checkboxes. meta is its private_metadata.
func DialogView(rec elicitation.Record, action, meta string) slack.ModalViewRequest {
	title, submit, label, optional := "Decline", "Decline", "Why? (optional; the agent reads it)", true
	switch {
	case action == notify.SlackActionApproveComment:
		title, submit, label, optional = "Approve", "Approve", "Comment (the agent reads it)", false
	case action == notify.SlackActionChoose:
		title, submit, label = "Choose", "Submit", "Comment (optional; the agent reads it)"
	case rec.State.Kind == elicitation.KindSelection:
		title, label = "None of these", "What would fit better? (optional; the agent reads it)"
	}
	blocks := []slack.Block{slack.NewSectionBlock(notify.SlackAgentText(rec.Payload.Message, 3000), nil, nil)}
	if action == notify.SlackActionChoose {
		var opts []*slack.OptionBlockObject
		for i, o := range rec.Payload.Options {
			opts = append(opts, slack.NewOptionBlockObject(strconv.Itoa(i), notify.SlackPlain(cut(o.DisplayLabel(), 75)), nil))
		}
		in := slack.NewInputBlock(blockOptions, notify.SlackPlain(cut(strings.TrimSuffix(sentence(rec.Payload.SelectionRule()), "."), 2000)), nil,
			slack.NewCheckboxGroupsBlockElement(blockOptions, opts...))
		in.Optional = rec.Payload.MinSelections == 0
		blocks = append(blocks, in)
	}
	comment := slack.NewPlainTextInputBlockElement(nil, blockComment)
	comment.Multiline, comment.MaxLength = true, elicitation.MaxCommentChars
	in := slack.NewInputBlock(blockComment, notify.SlackPlain(label), nil, comment)
	in.Optional = optional
	blocks = append(blocks, in)
	return slack.ModalViewRequest{
		Type: slack.VTModal, CallbackID: CallbackID, PrivateMetadata: meta,
		Title: notify.SlackPlain(title), Submit: notify.SlackPlain(submit), Close: notify.SlackPlain("Cancel"),
		Blocks: slack.Blocks{BlockSet: blocks},
	}
}

func cut(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// viewSubmission lands the dialog's decision; its answer is nil (close
// the dialog) or the errors to show in it.
func (h *Handler) viewSubmission(ctx context.Context, in *interaction) map[string]any {
	if in.View.CallbackID != CallbackID {
		return nil
	}
	var meta dialogMeta
	if json.Unmarshal([]byte(in.View.PrivateMetadata), &meta) != nil {
		return nil
	}
	t, ok := parseTarget(meta.Link)
	if !ok {
		return nil
	}
	who, refusal := h.reviewerOf(ctx, in)
	if refusal != "" {
		return fieldErrors(blockComment, refusal)
	}
	ctx = elicitation.WithIdentity(ctx, who)
	var values map[string]map[string]slack.BlockAction
	if in.View.State != nil {
		values = in.View.State.Values
	}
	sub := elicitation.Submission{
		ID: submissionID(in.Team.ID, in.User.ID, in.View.ID), By: who.Principal(), Via: elicitation.ViaSlack,
		Decision: elicitation.DecisionSubmitted, Comment: values[blockComment][blockComment].Value,
	}
	switch meta.Action {
	case notify.SlackActionDecline:
		sub.Decision = elicitation.DecisionDeclined
	case notify.SlackActionChoose:
		ids, ok := h.picked(ctx, t, values[blockOptions][blockOptions].SelectedOptions)
		if !ok {
			return fieldErrors(blockOptions, "Pick from the options shown.")
		}
		sub.SelectedIDs = ids
	case notify.SlackActionApproveComment:
	default:
		return nil
	}
	err := h.decide(ctx, meta.ResponseURL, t, sub, true)
	var e *elicitation.Error
	var over overShare
	switch {
	case errors.As(err, &over):
		return fieldErrors(blockComment, over.Error()) // the dialog stays open, its comment kept
	case err == nil, !errors.As(err, &e) || e.Code != elicitation.CodeInvalidArgument:
		return nil // recorded, or told through the message (decide did)
	case errors.Is(err, elicitation.ErrSelectionInvalid):
		return fieldErrors(blockOptions, sentence(e.Message))
	}
	return fieldErrors(blockComment, sentence(e.Message))
}

// picked is the option ids of the checked boxes (their values are the
// options' indexes).
func (h *Handler) picked(ctx context.Context, t target, sel []slack.OptionBlockObject) ([]string, bool) {
	rv, err := h.Service.Receipt(ctx, t.id, t.key)
	if err != nil {
		return nil, false
	}
	ids := make([]string, 0, len(sel))
	for _, s := range sel {
		i, err := strconv.Atoi(s.Value)
		if err != nil || i < 0 || i >= len(rv.Payload.Options) {
			return nil, false
		}
		ids = append(ids, rv.Payload.Options[i].ID)
	}
	return ids, true
}

func fieldErrors(block, msg string) map[string]any {
	return map[string]any{"response_action": "errors", "errors": map[string]string{block: msg}}
}
