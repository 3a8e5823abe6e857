package review

import (
	"context"
	"fmt"
	"html/template"
	"net/url"
	"strings"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/pagetoken"
)

// pageView is what page.html renders.
type pageView struct {
	Title   string
	PageCSS template.CSS
	Final   *finalView
	// Reviewer is the signed-in reviewer the page is shown to (empty
	// without sign-in).
	Reviewer string
	// Quorum says how many approvals a pending request still needs, and
	// whose it has (requests with approvals above 1).
	Quorum string
	// Inbox links a signed-in reviewer's page of a request back to their
	// inbox (relative, so that it keeps any path prefix).
	Inbox string

	Message template.HTML // the safe Markdown subset (messageHTML)
	Asked   askedView
	Token   string
	Notice  string
	Errors  []string

	Selection *selectionView
	Approval  *approvalView
	Comment   commentView
	// Standing offers a standing approval with the approval (standing.go).
	Standing *standingView

	SubmitLabel, SubmitMeaning, DeclineLabel, DeclineMeaning string
	// NoApprove, when set, says why the submit button is not offered: the
	// signed-in reviewer's approval would not count towards the quorum
	// (Service.ApprovalRefusal); Decline still is.
	NoApprove string
}

// askedView says who asked, when, and how long is left.
type askedView struct {
	By, Client           string
	At, AtISO            string
	Expires, ExpiresISO  string
	ExpiresIn            string
	Principal, Anonymous bool
}

// commentView is the optional note sent with either button.
type commentView struct {
	Prompt, Value string
	Max           int
}

type frameView struct {
	Doc    string
	Height int
}

// prior is what a refused submission or a filter round trip carried, shown
// again on the next page.
type prior struct {
	errors   []string
	fields   map[string]string
	selected []string
	form     map[string][]string
	comment  string
	query    string
	// standing is the standing approval part of the form sent.
	standing url.Values
}

const formPrefix = "f."

// timeText is how the page writes a moment: in UTC, with its zone.
func timeText(t time.Time) string { return t.UTC().Format("Mon 2 Jan 2006, 15:04 MST") }

func (h *Handler) labels(p elicitation.Payload, kind elicitation.Kind) (submit, submitMeaning, decline, declineMeaning string) {
	defSubmit, defDecline := "Approve", "Decline"
	if kind == elicitation.KindSelection {
		defSubmit, defDecline = "Submit selection", "None of these — refine"
	}
	submit, decline = defSubmit, defDecline
	if l := strings.TrimSpace(p.Labels.Submit); l != "" && l != defSubmit {
		submit, submitMeaning = l, strings.ToLower(defSubmit[:1])+defSubmit[1:]
	}
	if l := strings.TrimSpace(p.Labels.Decline); l != "" && l != defDecline {
		decline, declineMeaning = l, strings.ToLower(defDecline[:1])+defDecline[1:]
	}
	return
}

// asked describes the request's origin and deadline as seen at now.
func asked(st elicitation.State, p elicitation.Payload, now time.Time) askedView {
	a := askedView{
		By: st.Owner, Client: p.Client.String(),
		At: timeText(st.CreatedAt), AtISO: st.CreatedAt.UTC().Format(time.RFC3339),
		Expires: timeText(st.ExpiresAt), ExpiresISO: st.ExpiresAt.UTC().Format(time.RFC3339),
		ExpiresIn: elicitation.HumanDuration(st.ExpiresAt.Sub(now)) + " left",
	}
	a.Anonymous = a.By == "" || a.By == elicitation.Anonymous
	return a
}

// pendingView builds the page of a pending request with a fresh page token.
func (h *Handler) pendingView(ctx context.Context, rv elicitation.Review, pr *prior) (*pageView, error) {
	rec, reviewer := rv.Record, tokenReviewer(ctx)
	now := h.Now()
	exp := now.Add(h.TokenTTL)
	if rec.State.ExpiresAt.Before(exp) {
		exp = rec.State.ExpiresAt
	}
	tok, err := h.Tokens.Seal(pagetoken.Claims{ElicitationID: rec.State.ID, RenderID: h.NewRenderID(), Expires: exp, RequestExpires: rec.State.ExpiresAt, Reviewer: reviewer})
	if err != nil {
		return nil, fmt.Errorf("seal page token: %w", err)
	}
	v := &pageView{Message: messageHTML(rec.Payload.Message), Token: tok, Asked: asked(rec.State, rec.Payload, now)}
	v.SubmitLabel, v.SubmitMeaning, v.DeclineLabel, v.DeclineMeaning = h.labels(rec.Payload, rec.State.Kind)
	v.Comment = commentView{Max: elicitation.MaxCommentChars, Prompt: "A reason, a condition, or anything the agent should know."}
	if pr != nil {
		v.Errors, v.Comment.Value = pr.errors, pr.comment
	}
	out, terr := h.Templates.render(rec.Payload)
	if terr != nil {
		// Templates were checked at creation; if one fails now (a slower
		// machine, a changed bound), fall back to the default rendering.
		h.Logger.Warn("review page: template failed, showing the default rendering", "elicitationId", rec.State.ID, "err", terr)
		v.Notice = "The presentation supplied with this request could not be shown, so it is shown plainly."
		out = rendered{}
	}
	switch rec.State.Kind {
	case elicitation.KindSelection:
		v.Title = "Choose: review request"
		v.Comment.Prompt = "With “" + v.DeclineLabel + "”, say what to refine; with “" + v.SubmitLabel + "”, anything the agent should know."
		v.Selection = selection(rec.Payload, out, pr)
	default:
		v.Title = "Approve: review request"
		a, err := approval(rec.Payload, out, pr)
		if err != nil {
			return nil, err
		}
		v.Approval = a
	}
	if reviewer != "" {
		v.Standing = standingOffer(rec, h.Service.StandingMaxTTL(), pr)
	}
	// An approval the quorum would refuse is not offered, by the rule
	// Submit applies (any other answer leaves it to Submit to say).
	if why := approvalRefusalText(h.Service.ApprovalRefusal(ctx, rec)); why != "" {
		v.NoApprove, v.Standing = "Your approval would not count: "+why, nil
	}
	return v, nil
}
