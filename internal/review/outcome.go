package review

import (
	"cmp"
	"errors"
	"net/http"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// outcome is one way a request to the review page or the submission
// endpoint ends. The outcomes table is the one place that chooses the HTTP
// status and the page of each.
type outcome int

const (
	outPending             outcome = iota // GET of a pending request: the page
	outFiltered                           // POST "Filter": the page again, picks and comment kept
	outInvalid                            // POST of an answer that does not satisfy the request: the page again, with what to fix
	outRecorded                           // POST that landed, or its retry: the receipt
	outCounted                            // POST of an approval that counts towards a quorum without completing it
	outVoteRefused                        // POST of an approval the quorum does not count (the reviewer's second, or another answer)
	outForbidden                          // a signed-in reviewer who may not decide (not named, or the creator)
	outShowDecided                        // GET after a decision
	outShowCanceled                       // GET after a cancel
	outShowExpired                        // GET after expiry
	outRefuseDecided                      // POST after a decision, or the same page resent with another answer
	outRefuseCanceled                     // POST after a cancel
	outRefuseExpired                      // POST after expiry
	outNotFound                           // unknown id, wrong review key, a truncated link
	outMethod                             // a method the address does not answer
	outTokenInvalid                       // page token missing, forged, or of another request
	outTokenExpired                       // page token past its expiry while the request is still open
	outCrossOrigin                        // a submission sent by a page of another origin (CheckOrigin)
	outBodyTooLarge                       // body over MaxBodyBytes
	outValueTooLarge                      // one value over MaxValueBytes
	outMalformed                          // a body that is not a form
	outTooMany                            // a signed-in reviewer past their share of decisions (Options.Decisions)
	outSignInMethod                       // sign-in: a method its addresses do not answer
	outSignInMisconfigured                // sign-in: this address cannot sign reviewers in (the public URL)
	outSignInUnavailable                  // sign-in: the identity provider cannot be reached
	outSignInFailed                       // sign-in: it could not be started
	outSignInIncomplete                   // sign-in: a callback that does not complete one (stray, stale, tampered, failed exchange)
	outSignInRefused                      // sign-in: the identity provider answered with an error
	outSignInTooMany                      // sign-in: a callback past the bound on code exchanges
	outInternal                           // anything else: nothing was decided
)

// page is which page an outcome shows.
type page int

const (
	pagePending page = iota // the request, to answer (pendingView)
	pageReceipt             // what was recorded (receiptPage)
	pageCounted             // an approval counted towards a quorum (approvalCounted)
	pageClosed              // the final state (closedView)
	pageProblem             // heading and text of the rule
)

// closedKind is which final state a pageClosed outcome shows.
type closedKind int

const (
	closedDecided closedKind = iota
	closedCanceled
	closedExpired
)

type outcomeRule struct {
	status  int
	page    page
	closed  closedKind // pageClosed
	heading string     // pageProblem
	text    []string   // pageProblem
	reload  bool       // pageProblem: offer to reload
	// switchAccount offers to sign in with another account (pageProblem).
	switchAccount bool
	// errText appends the error's public sentence to text (pageProblem).
	errText bool
	// refusal is the audit reason of a submission refused before it
	// reaches the Service ("" for none).
	refusal string
}

var outcomes = map[outcome]outcomeRule{
	outPending:     {status: http.StatusOK, page: pagePending},
	outFiltered:    {status: http.StatusOK, page: pagePending},
	outInvalid:     {status: http.StatusUnprocessableEntity, page: pagePending},
	outRecorded:    {status: http.StatusOK, page: pageReceipt},
	outCounted:     {status: http.StatusOK, page: pageCounted},
	outVoteRefused: {status: http.StatusConflict, page: pageProblem, heading: "This approval was not counted", errText: true},
	outForbidden: {status: http.StatusForbidden, page: pageProblem, heading: "You cannot decide this request", errText: true,
		text: []string{"Nothing was decided."}, switchAccount: true},
	outShowDecided:    {status: http.StatusOK, page: pageClosed, closed: closedDecided},
	outShowCanceled:   {status: http.StatusOK, page: pageClosed, closed: closedCanceled},
	outShowExpired:    {status: http.StatusOK, page: pageClosed, closed: closedExpired},
	outRefuseDecided:  {status: http.StatusConflict, page: pageClosed, closed: closedDecided},
	outRefuseCanceled: {status: http.StatusConflict, page: pageClosed, closed: closedCanceled},
	outRefuseExpired:  {status: http.StatusGone, page: pageClosed, closed: closedExpired},
	outNotFound: {status: http.StatusNotFound, page: pageProblem, heading: "Request not found",
		text: []string{"There is no review request at this address. Check that the link is complete, or ask the agent for a new one."}},
	outMethod: {status: http.StatusMethodNotAllowed, page: pageProblem, heading: "Method not allowed",
		text: []string{"This address answers GET (to show the request) and POST (to answer it)."}},
	outTokenInvalid: {status: http.StatusForbidden, page: pageProblem, heading: "This page cannot send an answer", refusal: "invalid page token",
		text: []string{"The page's security token is missing or not valid, so nothing was decided. Open the review link again to answer."}},
	outTokenExpired: {status: http.StatusForbidden, page: pageProblem, heading: "This page is too old to send", reload: true, refusal: "page token expired",
		text: []string{"Nothing was decided. Reload the page to get a fresh one, then answer again."}},
	outCrossOrigin: {status: http.StatusForbidden, page: pageProblem, heading: "This answer came from another site", refusal: "cross-origin submission",
		text: []string{"Nothing was decided. Open the review link yourself and answer on its own page."}},
	outBodyTooLarge: {status: http.StatusRequestEntityTooLarge, page: pageProblem, heading: "Too much data", refusal: "body too large",
		text: []string{"The submission is larger than the server accepts. Nothing was decided."}},
	outValueTooLarge: {status: http.StatusRequestEntityTooLarge, page: pageProblem, heading: "A value is too long", refusal: "value too large",
		text: []string{"One of the submitted values is longer than the server accepts. Nothing was decided."}},
	outMalformed: {status: http.StatusBadRequest, page: pageProblem, heading: "The submission could not be read", refusal: "malformed body",
		text: []string{"Nothing was decided. Reload the page and try again."}},
	// Not audited: a flood of refusals would write as much as the
	// decisions it stands for.
	outTooMany: {status: http.StatusTooManyRequests, page: pageProblem, heading: "Too many decisions", reload: true,
		text: []string{"You have sent more decisions than this server takes in this time, so nothing was decided. Wait a few minutes, then reload the page and answer again."}},
	outSignInMethod: {status: http.StatusMethodNotAllowed, page: pageProblem, heading: "Method not allowed",
		text: []string{"This address answers GET."}},
	outSignInMisconfigured: {status: http.StatusInternalServerError, page: pageProblem, heading: "Sign-in is not set up correctly",
		text: []string{"The server cannot sign reviewers in on this address. Nothing was decided; tell the operator."}},
	outSignInUnavailable: {status: http.StatusServiceUnavailable, page: pageProblem, heading: "Sign-in is unavailable",
		text: []string{"The identity provider cannot be reached right now. Nothing was decided. Try again in a moment."}},
	outSignInFailed: {status: http.StatusInternalServerError, page: pageProblem, heading: "Sign-in failed",
		text: []string{"Nothing was decided. Try again in a moment."}},
	outSignInIncomplete: {status: http.StatusBadRequest, page: pageProblem, heading: "Sign-in did not complete",
		text: []string{"Nothing was decided. Open the review link again to sign in."}},
	outSignInRefused: {status: http.StatusForbidden, page: pageProblem, heading: "Sign-in did not complete",
		text: []string{"Nothing was decided. Open the review link again to sign in."}},
	outSignInTooMany: {status: http.StatusTooManyRequests, page: pageProblem, heading: "Too many sign-ins",
		text: []string{"This server is completing more sign-ins than it takes in this time, from your network or in all. Nothing was decided. Wait a few minutes, then open the review link again to sign in."}},
	outInternal: {status: http.StatusInternalServerError, page: pageProblem, heading: "Something went wrong",
		text: []string{"The server could not show this request. Nothing was decided. Try again in a moment."}},
}

// shown is the outcome of showing a request (GET, or a POST that only
// re-renders) in state st: the page while it is pending, else its final
// state, as a GET sees it (200) or as a POST is refused (409, 410).
func shown(st elicitation.State, post bool) outcome {
	switch st.Status {
	case elicitation.StatusPending:
		return outPending
	case elicitation.StatusExpired:
		return pick(post, outRefuseExpired, outShowExpired)
	case elicitation.StatusCanceled:
		return pick(post, outRefuseCanceled, outShowCanceled)
	}
	return pick(post, outRefuseDecided, outShowDecided)
}

func pick(post bool, onPost, onGet outcome) outcome {
	if post {
		return onPost
	}
	return onGet
}

// submitted is the outcome of the Service's answer to a submission.
func submitted(err error, st elicitation.State, sub elicitation.Submission) outcome {
	switch {
	case err == nil && st.Status == elicitation.StatusPending:
		return outCounted
	case errors.Is(err, elicitation.ErrAlreadyApproved), errors.Is(err, elicitation.ErrAnswerDiffers):
		return outVoteRefused
	case elicitation.CodeOf(err) == elicitation.CodeForbidden:
		return outForbidden
	case err == nil && st.Decision != sub.Decision:
		// The Service recognises a retry by the render id alone: the same
		// page sent again with the other button must not be told that its
		// answer was recorded.
		return outRefuseDecided
	case err == nil:
		return outRecorded
	case errors.Is(err, elicitation.ErrNotFound):
		return outNotFound
	case errors.Is(err, elicitation.ErrExpired):
		return outRefuseExpired
	case errors.Is(err, elicitation.ErrCanceled):
		return outRefuseCanceled
	case errors.Is(err, elicitation.ErrConflict):
		return outRefuseDecided
	case elicitation.CodeOf(err) == elicitation.CodeInvalidArgument:
		return outInvalid
	}
	return outInternal
}

// reply is what a page is built from; which fields matter depends on the
// outcome's page.
type reply struct {
	id, key  string
	review   elicitation.Review     // pagePending, pageClosed, pageReceipt
	state    elicitation.State      // pageReceipt: the state Submit returned
	sub      elicitation.Submission // pageReceipt: what was sent
	prior    *prior                 // pagePending: what to show again
	refusal  string                 // overrides the rule's audit reason
	ruleLost bool                   // pageReceipt: the standing approval asked for was not saved
	err      error                  // outInternal: logged, never shown
}

// respond writes outcome o: it audits a refusal the rule names (a wrong key
// then gets the not-found page, and nothing is recorded), builds the page
// and writes it with the rule's status.
func (h *Handler) respond(w http.ResponseWriter, r *http.Request, o outcome, x reply) {
	rule := outcomes[o]
	if reason := cmp.Or(x.refusal, rule.refusal); reason != "" {
		by := ""
		if id, ok := elicitation.IdentityFrom(r.Context()); ok {
			by = id.Principal()
		}
		err := h.Service.RefuseSubmission(r.Context(), x.id, x.key, by, reason)
		switch {
		case errors.Is(err, elicitation.ErrNotFound):
			o, rule = outNotFound, outcomes[outNotFound]
		case err != nil:
			h.Logger.ErrorContext(r.Context(), "audit refused submission", "elicitationId", x.id, "reason", reason, "err", err)
		}
	}
	if o == outInternal && x.err != nil {
		h.Logger.ErrorContext(r.Context(), "review page", "method", r.Method, "elicitationId", x.id, "err", x.err)
	}
	var v *pageView
	switch rule.page {
	case pagePending:
		var err error
		if v, err = h.pendingView(r.Context(), x.review, x.prior); err != nil {
			h.respond(w, r, outInternal, reply{id: x.id, err: err})
			return
		}
	case pageReceipt:
		v = receiptPage(x.review.Record, x.state, x.sub, x.ruleLost)
	case pageCounted:
		v = approvalCounted(x.state)
	case pageClosed:
		st := x.review.State
		if st.ID == "" {
			st = x.state
		}
		v = closedView(rule.closed, x.review.Record, st)
	default:
		text := rule.text
		if rule.errText && x.err != nil {
			text = append([]string{sentence(elicitation.PublicMessage(x.err))}, text...)
		}
		v = &pageView{Title: rule.heading, Final: &finalView{Class: "problem", Heading: rule.heading, Text: text, Reload: rule.reload}}
		if rule.switchAccount && x.id != "" && x.key != "" {
			v.Final.SwitchAccount = switchAccountURL(x.id, x.key)
		}
	}
	if _, ok := elicitation.IdentityFrom(r.Context()); ok && x.id != "" {
		v.Inbox = inboxHref(x.key)
	}
	h.write(w, rule.status, signedIn(v, x.review))
}

// inboxHref is the inbox relative to a request's page: /review/{id} or
// /review/{id}/{key}.
func inboxHref(key string) string {
	if key == elicitation.NoKey {
		return "./"
	}
	return "../"
}
