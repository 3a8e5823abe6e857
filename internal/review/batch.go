package review

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/pagetoken"
)

// Batch triage: POST /review/ (the inbox's own address) approves or
// declines several pending requests with one look, in two steps, no
// script.
//
//  1. The inbox's form sends the ticked requests (id, repeated) or every
//     request that matches its filter (all=1 with agent and kind), and the
//     decision. Nothing is decided: the answer is a confirmation page that
//     lists exactly what would be decided, what is left out and why (a form
//     to fill, options to pick, already decided), and carries a batch token.
//  2. The confirmation page sends the same ids and decision with the token
//     (and an optional comment). Each request is then decided on its own
//     through Service.Submit, the one path and the checks of a single
//     decision on its page (/review/{id}, NoKey): its own audit entry,
//     outcome and notices.
//
// The batch token is a page token (internal/pagetoken) whose subject is a
// digest of the decision and the ids, not a request id, bound to the
// signed-in reviewer: it cannot be used for another reviewer, another set
// of requests, another decision, or as a single request's page token (nor
// a page token as a batch token). Each request's submission id is derived
// from the token's render id, so the confirmation sent again (a double
// tap, a lost response) decides nothing twice: the Service answers each
// with the success it was.
//
// A batch that names a request the reviewer may not decide (another
// reviewer's, one they asked through their agent, an unknown id) is
// refused whole, and nothing is decided or recorded: the inbox never
// offers such a request, so the batch was not made by it.

// MaxBatch bounds how many requests one batch decides.
const MaxBatch = 50

// batchTokenTTL bounds how long a confirmation page can be sent (never
// more than the handler's TokenTTL).
const batchTokenTTL = 15 * time.Minute

// batchView is what the "batch" template renders: the confirmation (Items,
// Out, Token) or the results (Done).
type batchView struct {
	shell

	Heading  string
	Notes    []string
	Decision string // elicitation.DecisionSubmitted or DecisionDeclined
	Verb     string // "Approve", "Decline"
	Items    []batchItem
	Out      []batchItem
	Token    string
	Done     []batchItem
	Back     string
}

// batchItem is one request of a batch: what the inbox shows of it and,
// when it is left out or decided, what happened.
type batchItem struct {
	inboxRow
	Outcome string
	OK      bool
}

// decisionVerbs name the decisions a batch may take.
var decisionVerbs = map[elicitation.Decision]string{
	elicitation.DecisionSubmitted: "Approve",
	elicitation.DecisionDeclined:  "Decline",
}

// serveBatch handles a batch posted to the inbox: its step 1 (no token)
// or step 2 (token).
func (h *Handler) serveBatch(w http.ResponseWriter, r *http.Request, id elicitation.Identity, form url.Values) {
	who := id.Principal()
	d := elicitation.Decision(form.Get("decision"))
	if _, ok := decisionVerbs[d]; !ok || len(form["decision"]) != 1 {
		h.batchProblem(w, http.StatusBadRequest, who, "This batch could not be read", "Choose Approve or Decline. Nothing was decided.")
		return
	}
	if form.Has("token") {
		h.confirmBatch(w, r, who, form)
		return
	}
	h.reviewBatch(w, r, id, form)
}

// batchIDs are the ids a form names, in order, without repeats; bad says
// what is wrong with them.
func batchIDs(form url.Values) (ids []string, bad string) {
	for _, v := range form["id"] {
		if !requestID(v) {
			return nil, "One of the selected requests is not a request id. Nothing was decided."
		}
		if !slices.Contains(ids, v) {
			ids = append(ids, v)
		}
	}
	switch {
	case len(ids) == 0:
		return nil, "Select at least one request (tick it in the list), or choose every request that matches the filter. Nothing was decided."
	case len(ids) > MaxBatch:
		return nil, fmt.Sprintf("You selected %d requests; at most %d can be decided at once. Nothing was decided.", len(ids), MaxBatch)
	}
	return ids, ""
}

// reviewBatch is step 1: the confirmation page, deciding nothing.
func (h *Handler) reviewBatch(w http.ResponseWriter, r *http.Request, id elicitation.Identity, form url.Values) {
	who := id.Principal()
	d := elicitation.Decision(form.Get("decision"))
	v := &batchView{shell: shell{Reviewer: who}, Decision: string(d), Verb: decisionVerbs[d], Back: "./"}
	var ids []string
	if form.Get("all") != "" {
		f, bad := inboxFilter(url.Values{"agent": form["agent"], "kind": form["kind"]})
		if bad != "" {
			h.batchProblem(w, http.StatusBadRequest, who, "This batch could not be read", bad)
			return
		}
		v.Back = pageHref(f, "", elicitation.InboxCursor{})
		f.Limit = MaxBatch
		l, err := h.Service.ReviewerInbox(r.Context(), id, f)
		if err != nil {
			h.batchFailed(w, r, who, err)
			return
		}
		for _, it := range l.Items {
			ids = append(ids, it.ID)
		}
		if l.Total > len(l.Items) {
			v.Notes = append(v.Notes, fmt.Sprintf("%d requests match; only the %d most urgent are listed here (at most %d are decided at once). Decide these, then select again for the rest.", l.Total, len(l.Items), MaxBatch))
		}
		if len(ids) == 0 {
			h.batchProblem(w, http.StatusBadRequest, who, "Nothing to decide", "Nothing waiting for you matches this filter any more. Nothing was decided.")
			return
		}
	} else {
		var bad string
		if ids, bad = batchIDs(form); bad != "" {
			h.batchProblem(w, http.StatusBadRequest, who, "This batch could not be read", bad)
			return
		}
	}
	items, ok := h.loadBatch(w, r, who, ids)
	if !ok {
		return
	}
	for _, it := range items {
		it.Outcome = cmp.Or(it.Outcome, leftOut(it.rec))
		if it.Outcome == "" && d == elicitation.DecisionSubmitted {
			var err error
			if it.Outcome, err = h.quorumLeftOut(r.Context(), it.rec); err != nil {
				h.batchFailed(w, r, who, err)
				return
			}
		}
		if it.Outcome != "" {
			v.Out = append(v.Out, it.batchItem)
		} else {
			v.Items = append(v.Items, it.batchItem)
		}
	}
	if len(v.Items) > 0 {
		keep := make([]string, len(v.Items))
		for i, it := range v.Items {
			keep[i] = it.ID
		}
		tok, err := h.sealFormToken(r.Context(), batchSubject(d, keep), min(h.TokenTTL, batchTokenTTL))
		if err != nil {
			h.batchFailed(w, r, who, err)
			return
		}
		v.Token = tok
	}
	v.Heading = confirmHeading(v.Verb, len(v.Items))
	v.Title = v.Heading
	h.writeShell(w, http.StatusOK, "batch", v)
}

func confirmHeading(verb string, n int) string {
	switch n {
	case 0:
		return "Nothing here can be decided at once"
	case 1:
		return verb + " 1 request?"
	}
	return fmt.Sprintf("%s %d requests?", verb, n)
}

// loaded is a request of a batch as read for it.
type loaded struct {
	batchItem
	rec elicitation.Record
}

// loadBatch reads each request the way its page without the key does
// (Service.Receipt with NoKey: the may-decide rule, nothing audited); a
// request no longer pending has its Outcome set. A batch that names a
// request the reviewer may not decide is refused whole: nothing is
// decided, nothing recorded on that request. ok false: the page that says
// why the batch cannot go on is written.
func (h *Handler) loadBatch(w http.ResponseWriter, r *http.Request, who string, ids []string) (items []loaded, ok bool) {
	for _, id := range ids {
		rv, err := h.Service.Receipt(r.Context(), id, elicitation.NoKey)
		switch {
		case errors.Is(err, elicitation.ErrNotFound), elicitation.CodeOf(err) == elicitation.CodeForbidden:
			h.Logger.WarnContext(r.Context(), "review batch names a request the reviewer may not decide", "elicitationId", id)
			h.batchProblem(w, http.StatusForbidden, who, "You cannot decide this batch",
				fmt.Sprintf("The batch names a request you may not decide (id %s): it names other reviewers, your own agent asked it, or there is no such request. Nothing was decided.", id))
			return nil, false
		case err != nil:
			h.batchFailed(w, r, who, err)
			return nil, false
		}
		it := loaded{batchItem: batchItemOf(rv), rec: rv.Record}
		if rv.State.Status != elicitation.StatusPending {
			it.Outcome = closedOutcome(rv.State.Status)
		}
		items = append(items, it)
	}
	return items, true
}

// batchItemOf is how a batch lists a request: as the inbox's row does.
func batchItemOf(rv elicitation.Review) batchItem {
	st := rv.State
	e := elicitation.InboxEntryOf(elicitation.Request{State: st, Payload: rv.Payload})
	it := batchItem{inboxRow: inboxRowOf(elicitation.InboxItem{InboxEntry: e, Left: st.ExpiresAt.Sub(rv.Now), Votes: len(st.Approvers)})}
	if st.Approvals > 1 { // without the inbox's "yours counted": the batch's own outcome says
		it.Quorum = fmt.Sprintf("%d of %d approvals", len(st.Approvers), st.Approvals)
	}
	return it
}

// leftOut says why a pending request cannot be decided in a batch, or ""
// if it can: a batch gives no form values and picks no options.
func leftOut(rec elicitation.Record) string {
	switch {
	case rec.State.Kind == elicitation.KindSelection:
		return "Left out: it asks you to choose options. Open it to choose."
	case rec.Payload.Schema != nil:
		return "Left out: it has a form to fill. Open it to fill it in."
	}
	return ""
}

// quorumLeftOut says why the signed-in reviewer's approval of rec would
// not count towards its quorum, or "" if it would: the rule the second
// step's Submit applies (Service.ApprovalRefusal).
func (h *Handler) quorumLeftOut(ctx context.Context, rec elicitation.Record) (string, error) {
	err := h.Service.ApprovalRefusal(ctx, rec)
	if why := approvalRefusalText(err); why != "" {
		return "Left out: " + why, nil
	}
	return "", err
}

// approvalRefusalText says why an approval the quorum would refuse
// (Service.ApprovalRefusal's answer) would not count, or "" for any other
// answer: what a batch's first step and a request's page both say.
func approvalRefusalText(err error) string {
	switch {
	case errors.Is(err, elicitation.ErrSeatApproved):
		return "an approval for this place is already counted, given by the reviewer or their delegate; it needs other reviewers'."
	case errors.Is(err, elicitation.ErrAlreadyApproved):
		return "your approval is already counted; it needs other reviewers'."
	}
	return ""
}

// closedOutcome says that a request is no longer pending, and why.
func closedOutcome(s elicitation.Status) string {
	switch s {
	case elicitation.StatusExpired:
		return "Not decided: it expired."
	case elicitation.StatusCanceled:
		return "Not decided: the agent canceled it."
	}
	return "Not decided: it has already been answered."
}

// batchSubject is what a batch token binds in place of a request id: the
// decision and the ids, as a digest (a request id has no '.').
func batchSubject(d elicitation.Decision, ids []string) string {
	s := slices.Clone(ids)
	slices.Sort(s)
	sum := sha256.Sum256([]byte("elicitation inbox batch\x00" + string(d) + "\x00" + strings.Join(s, "\x00")))
	return "batch." + base64.RawURLEncoding.EncodeToString(sum[:])
}

// confirmBatch is step 2: check the token against who and what, then
// decide each request on its own.
func (h *Handler) confirmBatch(w http.ResponseWriter, r *http.Request, who string, form url.Values) {
	d := elicitation.Decision(form.Get("decision"))
	ids, bad := batchIDs(form)
	if bad != "" {
		h.batchProblem(w, http.StatusBadRequest, who, "This batch could not be read", bad)
		return
	}
	claims, problem := h.openBatchToken(r.Context(), form["token"], d, ids)
	if problem != "" {
		h.Logger.WarnContext(r.Context(), "review batch refused", "reason", problem)
		h.batchProblem(w, http.StatusForbidden, who, "This confirmation cannot be sent", problem)
		return
	}
	items, ok := h.loadBatch(w, r, who, ids)
	if !ok {
		return
	}
	v := &batchView{shell: shell{Reviewer: who}, Verb: decisionVerbs[d], Back: "./"}
	decided := 0
	for _, it := range items {
		sub := elicitation.Submission{ID: claims.RenderID + "." + it.ID, Decision: d, Comment: form.Get("comment")}
		st, err := h.Service.Submit(r.Context(), it.ID, elicitation.NoKey, sub)
		o := submitted(err, st, sub)
		if o == outInternal {
			h.Logger.ErrorContext(r.Context(), "review batch decision", "elicitationId", it.ID, "err", err)
		}
		it.Outcome, it.OK = batchOutcome(o, err, st)
		if it.OK {
			decided++
		}
		v.Done = append(v.Done, it.batchItem)
	}
	v.Heading = doneHeading(d, decided, len(items))
	v.Title = v.Heading
	h.writeShell(w, http.StatusOK, "batch", v)
}

// openBatchToken checks a batch token (openFormToken): authentic, not
// expired, for this decision and these ids, rendered for the signed-in
// reviewer. problem is the sentence of a refusal.
func (h *Handler) openBatchToken(ctx context.Context, tokens []string, d elicitation.Decision, ids []string) (pagetoken.Claims, string) {
	switch c, check := h.openFormToken(ctx, tokens, batchSubject(d, ids)); check {
	case tokenExpired:
		return pagetoken.Claims{}, "This confirmation is too old to send. Nothing was decided. Go back to your inbox and select again."
	case tokenInvalid:
		return pagetoken.Claims{}, "The confirmation's security token is missing or not valid for these requests, this decision or you, so nothing was decided. Go back to your inbox and select again."
	default:
		return c, ""
	}
}

// batchOutcome says what became of one request of a confirmed batch; ok
// when the reviewer's decision was recorded (or counted, for a quorum).
func batchOutcome(o outcome, err error, st elicitation.State) (string, bool) {
	switch o {
	case outRecorded:
		if st.Decision == elicitation.DecisionDeclined {
			return "Declined.", true
		}
		return "Approved.", true
	case outCounted:
		return fmt.Sprintf("Your approval is counted (%d of %d); it needs other reviewers'.", len(st.Approvers), st.Approvals), true
	case outVoteRefused:
		return "Not counted: " + elicitation.PublicMessage(err) + ".", false
	case outForbidden, outNotFound:
		return "Not decided: you may no longer decide it.", false
	case outRefuseExpired:
		return closedOutcome(elicitation.StatusExpired), false
	case outRefuseCanceled:
		return closedOutcome(elicitation.StatusCanceled), false
	case outRefuseDecided:
		return closedOutcome(elicitation.StatusSubmitted), false
	case outInvalid:
		return "Not decided: " + elicitation.PublicMessage(err) + ". Open it to answer.", false
	}
	return "Not decided: something went wrong. Open it to try again.", false
}

func doneHeading(d elicitation.Decision, decided, n int) string {
	done := "approved"
	if d == elicitation.DecisionDeclined {
		done = "declined"
	}
	if decided == n {
		return fmt.Sprintf("%d of %d %s", decided, n, done)
	}
	return fmt.Sprintf("%d of %d %s, %d not decided", decided, n, done, n-decided)
}

func (h *Handler) batchFailed(w http.ResponseWriter, r *http.Request, who string, err error) {
	h.Logger.ErrorContext(r.Context(), "review batch", "err", err)
	h.batchProblem(w, http.StatusInternalServerError, who, "Something went wrong", "The server could not read the requests you selected. Nothing was decided. Try again in a moment.")
}

func (h *Handler) batchProblem(w http.ResponseWriter, status int, who, heading, text string) {
	h.writeShell(w, status, "batch", &batchView{shell: problemShell(who, heading, inboxLink, text)})
}
