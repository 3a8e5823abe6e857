// Package slackact takes decisions from Slack: the interaction requests
// Slack sends when a reviewer presses a button of an interactive Slack
// notice (internal/notify's SlackInteractiveMessage) or submits the dialog
// one opens. Every request is verified with the Slack app's signing secret
// and its five-minute window (Verify); the Slack user becomes a reviewer
// through the operator's mapping (notify.SlackAppConfig); the decision
// goes through the Service's one exactly-once path (Submit) under that
// identity, so that who may decide is decided exactly as on the review
// page; and the original message is updated through the interaction's
// response_url to show who decided. A user the mapping does not know, or
// who may not decide, is told so in a note only they see. Approve for 1
// hour also makes a standing approval, as the review page's fieldset
// would with its starting choices (approveStanding).
//
// docs/notifications.md is the operator's guide; docs/security.md says
// what a decision made in Slack proves.
package slackact

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/notify"
	"github.com/mcp-elicitation/elicitation/internal/ratelimit"
)

// Path is the interactivity request URL's path, on the review listener
// locally and on the submit function on AWS.
const Path = "/slack/interactions"

// maxBody caps an interaction's body (Slack includes the whole message).
const maxBody = 1 << 20

// Service is what the handler needs of the elicitation service;
// *elicitation.Service implements it.
type Service interface {
	Submit(ctx context.Context, id, key string, sub elicitation.Submission) (elicitation.State, error)
	Receipt(ctx context.Context, id, key string) (elicitation.Review, error)
	MayDecide(ctx context.Context, id, key string) (elicitation.State, error)
	// StandingMaxTTL bounds the standing approval Approve for 1 hour
	// makes (notify.SlackStanding); 0 without reviewer sign-in.
	StandingMaxTTL() time.Duration
}

// Options configure the handler; Service, SigningSecret and BotToken are
// required.
type Options struct {
	Service Service
	// SigningSecret is the Slack app's signing secret.
	SigningSecret string
	// BotToken (xoxb-…) opens the comment dialog (views.open) and reads
	// the e-mail of users the mapping names by address (users.info).
	BotToken string
	// APIURL is the Web API's base; default DefaultAPIURL. Response URLs
	// must be on its host or on "hooks." and its host.
	APIURL string
	// Users maps Slack users to reviewers.
	Users notify.SlackAppConfig
	// Client makes the calls to Slack; default a client with a 5 s timeout.
	Client *http.Client
	// Now is the clock of the replay window; give it the Service's.
	Now func() time.Time
	// Logger receives what failed (never the secret, the token or what an
	// interaction carried); default: discard.
	Logger *slog.Logger
	// Decisions is the reviewers' share of decisions, the review page's
	// (review.Options.Decisions, the same Limiter): each decision from a
	// button or a dialog spends one of the mapped reviewer's (keyed by
	// their principal, as the page keys its signed-in reviewer) and one of
	// everyone's; nil: none.
	Decisions *ratelimit.Limiter
}

// Handler serves POST Path: its Options, with the defaults in place, and
// what New builds of them.
type Handler struct {
	Options
	api    webAPI
	apiURL *url.URL
}

// New returns the handler of o.
func New(o Options) (*Handler, error) {
	switch {
	case o.Service == nil:
		return nil, errors.New("slackact: no service")
	case o.SigningSecret == "":
		return nil, errors.New("slackact: the Slack app's signing secret is not set")
	case o.BotToken == "":
		return nil, errors.New("slackact: the Slack app's bot token is not set (the comment dialog needs it)")
	}
	o.APIURL = cmp.Or(o.APIURL, DefaultAPIURL)
	u, err := url.Parse(strings.TrimRight(o.APIURL, "/"))
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, errors.New("slackact: the Slack API URL must be an absolute http(s) URL")
	}
	o.Client = cmp.Or(o.Client, &http.Client{Timeout: 5 * time.Second})
	o.Logger = cmp.Or(o.Logger, slog.New(slog.DiscardHandler))
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Handler{Options: o, apiURL: u, api: newWebAPI(u.String(), o.BotToken, o.Client)}, nil
}

// interaction is Slack's interaction payload, as slack-go reads it.
type interaction = slack.InteractionCallback

// ServeHTTP verifies and answers one interaction request.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		http.Error(w, "request too large", http.StatusRequestEntityTooLarge)
		return
	}
	if err := Verify([]byte(h.SigningSecret), r.Header, body, h.Now()); err != nil {
		h.Logger.WarnContext(r.Context(), "slack interaction refused", "err", err)
		http.Error(w, "invalid or stale Slack signature", http.StatusUnauthorized)
		return
	}
	form, err := url.ParseQuery(string(body))
	var in interaction
	if err != nil || json.Unmarshal([]byte(form.Get("payload")), &in) != nil {
		http.Error(w, "not a Slack interaction payload", http.StatusBadRequest)
		return
	}
	switch in.Type {
	case slack.InteractionTypeBlockActions:
		h.blockActions(r.Context(), &in)
		w.WriteHeader(http.StatusOK)
	case slack.InteractionTypeViewSubmission:
		h.writeJSON(w, h.viewSubmission(r.Context(), &in))
	default:
		// view_closed, shortcuts, anything else: nothing to do.
		w.WriteHeader(http.StatusOK)
	}
}

func (h *Handler) writeJSON(w http.ResponseWriter, v map[string]any) {
	if v == nil {
		w.WriteHeader(http.StatusOK) // an empty answer closes the dialog
		return
	}
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_, _ = w.Write(b)
}

// target is the request a button names: its value is the review URL.
type target struct{ id, key, link string }

func parseTarget(link string) (target, bool) {
	u, err := url.Parse(link)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") {
		return target{}, false
	}
	segs := strings.Split(strings.Trim(u.EscapedPath(), "/"), "/")
	n := len(segs)
	if n < 3 || segs[n-3] != "review" {
		return target{}, false
	}
	id, err1 := url.PathUnescape(segs[n-2])
	key, err2 := url.PathUnescape(segs[n-1])
	if err1 != nil || err2 != nil || id == "" || key == "" {
		return target{}, false
	}
	return target{id: id, key: key, link: link}, true
}

// reviewerOf is who the interaction's user is to the service, through the
// operator's mapping; refusal is the note to show a user it does not map.
func (h *Handler) reviewerOf(ctx context.Context, in *interaction) (elicitation.Identity, string) {
	// The presser's own workspace is user.team_id (on Enterprise Grid the
	// organisation's id, E…); team is the workspace the message came from,
	// which in a channel shared with another organisation (Slack Connect)
	// is not the presser's. team only stands in for a payload without the
	// user's.
	team := cmp.Or(in.User.TeamID, in.Team.ID)
	if len(h.Users.Teams) > 0 && !slices.Contains(h.Users.Teams, team) {
		return elicitation.Identity{}, "This Slack workspace is not one this deployment takes decisions from. Use Review and decide."
	}
	u, ok := h.Users.User(in.User.ID, "")
	if !ok && in.User.ID != "" && h.Users.ByEmail() {
		email, err := h.api.userEmail(ctx, in.User.ID)
		if err != nil {
			h.Logger.WarnContext(ctx, "slack interaction: the user's e-mail could not be read", "err", err)
		} else {
			u, ok = h.Users.User("", email)
		}
	}
	if !ok {
		return elicitation.Identity{}, "Your Slack account is not mapped to a reviewer of this deployment, so you cannot decide here. Ask its operator to add you to the Slack mapping, or use Review and decide."
	}
	return elicitation.Identity{
		Issuer: "https://slack.com", Subject: "slack:" + team + ":" + in.User.ID,
		Email: strings.ToLower(u.Reviewer), EmailVerified: true, Groups: u.Groups,
	}, ""
}

// submissionID names one attempt: the same interaction (a replay, Slack
// sending it again) is the same attempt, so that it lands at most once.
func submissionID(parts ...string) string {
	sum := sha256.Sum256([]byte("elicitation slack submission\x00" + strings.Join(parts, "\x00")))
	return "slack-" + base64.RawURLEncoding.EncodeToString(sum[:18])
}

// blockActions answers a button press.
func (h *Handler) blockActions(ctx context.Context, in *interaction) {
	if len(in.ActionCallback.BlockActions) != 1 {
		return
	}
	a := in.ActionCallback.BlockActions[0]
	if a.ActionID == notify.SlackActionReview {
		return // the link button: Slack tells the app it was pressed
	}
	t, ok := parseTarget(a.Value)
	if !ok {
		h.Logger.WarnContext(ctx, "slack interaction: a button that names no request")
		return
	}
	who, refusal := h.reviewerOf(ctx, in)
	if refusal != "" {
		h.ephemeral(ctx, in.ResponseURL, refusal)
		return
	}
	ctx = elicitation.WithIdentity(ctx, who)
	sub := elicitation.Submission{
		ID: submissionID(in.Team.ID, in.User.ID, a.ActionID, a.ActionTs, in.Container.MessageTs),
		By: who.Principal(), Via: elicitation.ViaSlack, Decision: elicitation.DecisionSubmitted,
	}
	switch {
	case a.ActionID == notify.SlackActionApprove:
		h.decide(ctx, in.ResponseURL, t, sub, false)
	case a.ActionID == notify.SlackActionApproveStanding:
		h.approveStanding(ctx, in.ResponseURL, t, sub)
	case strings.HasPrefix(a.ActionID, notify.SlackActionSelect):
		h.selectOption(ctx, in.ResponseURL, t, sub, strings.TrimPrefix(a.ActionID, notify.SlackActionSelect))
	case a.ActionID == notify.SlackActionDecline || a.ActionID == notify.SlackActionApproveComment || a.ActionID == notify.SlackActionChoose:
		if a.ActionID == notify.SlackActionDecline {
			sub.Decision = elicitation.DecisionDeclined
		}
		h.openDialog(ctx, in, t, a.ActionID, sub)
	}
}

// selectOption picks the option at index (an option button).
func (h *Handler) selectOption(ctx context.Context, responseURL string, t target, sub elicitation.Submission, index string) {
	rv, err := h.Service.Receipt(ctx, t.id, t.key)
	if err != nil {
		h.refused(ctx, responseURL, t, err)
		return
	}
	i, err := strconv.Atoi(index)
	if err != nil || i < 0 || i >= len(rv.Payload.Options) || index != strconv.Itoa(i) {
		h.ephemeral(ctx, responseURL, "That option is not one of this request's. Use Review and decide.")
		return
	}
	sub.SelectedIDs = []string{rv.Payload.Options[i].ID}
	h.decide(ctx, responseURL, t, sub, false)
}

// approveStanding approves and makes a standing approval (Approve for 1
// hour): lasting notify.SlackStanding under the operator's cap, for
// notify.SlackStandingUses later requests, holding every field the domain
// holds by default (Payload.RuleFields), on a request the domain offers
// it for where the reviewer sees no fields (Record.StandingInPlace). The
// Service checks the rule as it checks the page's; a refusal records no
// decision and no rule, and the reviewer is told why. Once it lands, the
// reviewer is told what was made.
func (h *Handler) approveStanding(ctx context.Context, responseURL string, t target, sub elicitation.Submission) {
	rv, err := h.Service.Receipt(ctx, t.id, t.key)
	if err != nil {
		h.refused(ctx, responseURL, t, err)
		return
	}
	if !rv.Record.StandingInPlace() {
		h.ephemeral(ctx, responseURL, "This request cannot be approved standing from Slack: it asks for a form, several approvals or a choice, "+
			"or a standing approval could not hold all of it. Use Approve, or Review and decide (which shows the fields a standing approval holds).")
		return
	}
	now := h.Now()
	in := rv.Payload.RuleHoldingAll(now.Add(notify.SlackStanding(h.Service.StandingMaxTTL())), notify.SlackStandingUses)
	sub.Rule = in
	switch err := h.decide(ctx, responseURL, t, sub, false); {
	case err == nil:
		h.ephemeral(ctx, responseURL, "Approved. "+in.Summary(now))
	case errors.Is(err, elicitation.ErrRuleNotSaved):
		h.Logger.ErrorContext(ctx, "slack interaction: standing approval not saved", "elicitationId", t.id, "err", err)
		h.ephemeral(ctx, responseURL, "Approved, but the standing approval could not be saved: later requests like this one will be asked of you as before.")
	}
}

// decide lands sub: first the check of MayDecide, which records nothing
// (a request decided meanwhile, the replay of a press that already
// counted: the message is updated, nothing more), then Submit. From a
// dialog (inDialog), an answer Submit finds invalid is left to the dialog
// to show.
func (h *Handler) decide(ctx context.Context, responseURL string, t target, sub elicitation.Submission, inDialog bool) error {
	if err := h.spend(ctx, sub.By); err != nil {
		if !inDialog {
			h.ephemeral(ctx, responseURL, err.Error())
		}
		return err
	}
	_, err := h.Service.MayDecide(ctx, t.id, t.key)
	if err == nil || refusesPresser(err) {
		// Submit refuses a presser who may not decide for the same
		// reason, and audits it under the mapped identity, as it does the
		// page's refused submission.
		_, err = h.Service.Submit(ctx, t.id, t.key, sub)
	}
	switch {
	case err == nil, errors.Is(err, elicitation.ErrRuleNotSaved): // the approval stands
		h.update(ctx, responseURL, t)
	case !inDialog || elicitation.CodeOf(err) != elicitation.CodeInvalidArgument:
		h.refused(ctx, responseURL, t, err)
	}
	return err
}

// overShare refuses a decision past the reviewer's share of decisions,
// or everyone's (Options.Decisions); its text is the note to the presser.
type overShare struct{ wait time.Duration }

func (e overShare) Error() string {
	return "You have sent more decisions than this server takes in this time, so nothing was decided. Try again in " + elicitation.HumanDuration(e.wait) + "."
}

// spend charges one decision to principal, as the review page charges its
// signed-in reviewer: nil when it may go on, else an overShare.
func (h *Handler) spend(ctx context.Context, principal string) error {
	if h.Decisions == nil {
		return nil
	}
	if wait := h.Decisions.Take(principal, h.Now()); wait > 0 {
		h.Logger.WarnContext(ctx, "slack interaction refused", "reason", "reviewer over their share of decisions")
		return overShare{wait}
	}
	return nil
}

// refusesPresser says whether MayDecide's err refuses the user who
// pressed (not a reviewer the request names, its agent's owner), rather
// than the request (decided, canceled, expired, gone).
func refusesPresser(err error) bool {
	return elicitation.CodeOf(err) == elicitation.CodeForbidden
}

// refused tells the user why nothing was recorded; for a request that can
// no longer be decided it updates the message to say what became of it.
func (h *Handler) refused(ctx context.Context, responseURL string, t target, err error) {
	switch {
	case errors.Is(err, elicitation.ErrConflict), errors.Is(err, elicitation.ErrCanceled), errors.Is(err, elicitation.ErrExpired):
		h.update(ctx, responseURL, t)
	case refusesRule(err):
		h.ephemeral(ctx, responseURL, "Nothing was approved: "+sentence(elicitation.PublicMessage(err))+
			" Use Approve alone, or Review and decide to choose what a standing approval holds.")
	case errors.Is(err, elicitation.ErrNotFound):
		h.ephemeral(ctx, responseURL, "This request no longer exists (it was removed after its retention period).")
	case errors.Is(err, elicitation.ErrOwnerBarred):
		h.ephemeral(ctx, responseURL, "You created this request (through your agent), so you cannot decide it; ask another reviewer.")
	case errors.Is(err, elicitation.ErrNotReviewer):
		h.ephemeral(ctx, responseURL, "You are not one of the reviewers this request names, so your decision was not recorded. Ask the agent's owner to add you.")
	case elicitation.CodeOf(err) == elicitation.CodeInternal:
		h.Logger.ErrorContext(ctx, "slack decision", "elicitationId", t.id, "err", err)
		h.ephemeral(ctx, responseURL, "Your decision could not be recorded. Try again, or use Review and decide.")
	default:
		h.ephemeral(ctx, responseURL, sentence(elicitation.PublicMessage(err)))
	}
}

// refusesRule says whether err refuses the standing approval asked for
// with a decision, rather than the decision.
func refusesRule(err error) bool {
	for _, e := range []error{elicitation.ErrRuleInvalid, elicitation.ErrRuleNeedsArgument, elicitation.ErrRuleNeedsSignIn, elicitation.ErrRuleQuorum, elicitation.ErrTooManyRules} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

func sentence(s string) string {
	if s == "" {
		return s
	}
	s = strings.ToUpper(s[:1]) + s[1:]
	if !strings.HasSuffix(s, ".") {
		s += "."
	}
	return s
}

// update replaces the original message with the request as it stands:
// who decided, or the buttons again with the quorum's progress.
func (h *Handler) update(ctx context.Context, responseURL string, t target) {
	rv, err := h.Service.Receipt(ctx, t.id, t.key)
	if err != nil {
		h.Logger.WarnContext(ctx, "slack interaction: the request could not be read back", "elicitationId", t.id, "err", err)
		return
	}
	msg := notify.SlackInteractiveMessage(noticeOf(rv, t.link), notify.SlackStanding(h.Service.StandingMaxTTL()))
	msg.ReplaceOriginal = true
	h.respond(ctx, responseURL, msg)
}

// ephemeral shows text to the user who pressed the button only.
func (h *Handler) ephemeral(ctx context.Context, responseURL, text string) {
	h.respond(ctx, responseURL, &slack.WebhookMessage{ResponseType: slack.ResponseTypeEphemeral, Text: text})
}

// noticeOf is the notice that describes rv as it stands: pending (with
// the review link and its choices), decided, canceled or expired.
func noticeOf(rv elicitation.Review, link string) elicitation.Notice {
	st := rv.State
	n := elicitation.Notice{
		At: rv.Now, ID: st.ID, Kind: st.Kind, Message: rv.Payload.Message, Owner: st.Owner,
		CreatedAt: st.CreatedAt, ExpiresAt: st.ExpiresAt,
	}
	switch st.StatusAt(rv.Now) {
	case elicitation.StatusPending:
		n.Event, n.ReviewURL, n.Choices = elicitation.EventCreated, link, elicitation.ChoicesOf(rv.Record)
	case elicitation.StatusCanceled:
		n.Event, n.At = elicitation.EventCanceled, st.DecidedAt
	case elicitation.StatusExpired:
		n.Event = elicitation.EventExpired
	default:
		n.Event, n.Decision, n.DecidedBy, n.At = elicitation.EventDecided, st.Decision, st.Decider(), st.DecidedAt
	}
	return n
}
