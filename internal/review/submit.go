package review

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/pagetoken"
)

// serveSubmit handles POST /review/{id}/{key}. The order of checks: the
// body's size and shape, the page token (present, authentic, for this
// request, not expired), then the Service (review key, state, validation,
// exactly-once). Every refusal before the Service is audited with
// RefuseSubmission; the Service audits its own. Nothing is decided unless
// the Service accepts the submission.
func (h *Handler) serveSubmit(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		h.problem(w, http.StatusMethodNotAllowed, "Method not allowed", "This address accepts POST.")
		return
	}
	id, key, ok := pathIDs(r)
	if !ok {
		h.notFound(w)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, h.maxBody)
	if err := r.ParseForm(); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			h.refuse(w, r, id, key, http.StatusRequestEntityTooLarge, "body too large", "Too much data",
				"The submission is larger than the server accepts. Nothing was decided.")
			return
		}
		h.refuse(w, r, id, key, http.StatusBadRequest, "malformed body", "The submission could not be read",
			"Nothing was decided. Reload the page and try again.")
		return
	}
	form := r.PostForm
	for k, vs := range form {
		for _, v := range vs {
			if len(k)+len(v) > h.maxValue {
				h.refuse(w, r, id, key, http.StatusRequestEntityTooLarge, "value too large", "A value is too long",
					"One of the submitted values is longer than the server accepts. Nothing was decided.")
				return
			}
		}
	}
	claims, ok := h.checkToken(w, r, id, key, form["token"])
	if !ok {
		return
	}
	sub := elicitation.Submission{ID: claims.RenderID, Decision: elicitation.Decision(form.Get("decision"))}
	if sub.Decision != elicitation.DecisionDeclined {
		sub.SelectedIDs = form["option"]
		sub.Form = formValues(form)
	}
	st, err := h.svc.Submit(r.Context(), id, key, sub)
	switch {
	case err == nil && st.Status == elicitation.StatusPending:
		h.write(w, http.StatusOK, h.approvalCounted(st))
	case errors.Is(err, elicitation.ErrAlreadyApproved), errors.Is(err, elicitation.ErrAnswerDiffers):
		h.voteRefused(w, err)
	case elicitation.CodeOf(err) == elicitation.CodeForbidden:
		h.forbidden(w, err)
	case err == nil && st.Decision != sub.Decision:
		// The Service recognises a retry by the render id alone: the same
		// page sent again (back button) with the other button must not be
		// told that its answer was recorded.
		h.write(w, http.StatusConflict, h.finalView(elicitation.Record{}, st, nil))
	case err == nil:
		h.write(w, http.StatusOK, h.finalView(elicitation.Record{}, st, &sub))
	case errors.Is(err, elicitation.ErrNotFound):
		h.notFound(w)
	case errors.Is(err, elicitation.ErrExpired):
		st.Status = elicitation.StatusExpired
		h.write(w, http.StatusGone, h.finalView(elicitation.Record{}, st, nil))
	case errors.Is(err, elicitation.ErrCanceled):
		st.Status = elicitation.StatusCanceled
		h.write(w, http.StatusConflict, h.finalView(elicitation.Record{}, st, nil))
	case errors.Is(err, elicitation.ErrConflict):
		if st.Status == elicitation.StatusPending {
			st = elicitation.State{Kind: st.Kind, Status: elicitation.StatusSubmitted}
		}
		h.write(w, http.StatusConflict, h.finalView(elicitation.Record{}, st, nil))
	case elicitation.CodeOf(err) == elicitation.CodeInvalidArgument:
		h.invalid(w, r, id, key, err, form)
	default:
		h.internal(w, r, id, err)
	}
}

// checkToken checks the page token and reports whether the submission may
// go on to the Service. An authentic token past its expiry is refused with
// "reload the page" while the request could still be decided; once the
// request itself has expired it goes on, because the Service can then only
// answer 410, or repeat the success of the winning submission.
func (h *Handler) checkToken(w http.ResponseWriter, r *http.Request, id, key string, tokens []string) (pagetoken.Claims, bool) {
	forbid := func(reason string) {
		h.refuse(w, r, id, key, http.StatusForbidden, reason, "This page cannot send an answer",
			"The page's security token is missing or not valid, so nothing was decided. Open the review link again to answer.")
	}
	if len(tokens) == 0 || tokens[0] == "" {
		forbid("missing page token")
		return pagetoken.Claims{}, false
	}
	if len(tokens) > 1 {
		forbid("more than one page token")
		return pagetoken.Claims{}, false
	}
	now := h.now()
	c, err := h.tokens.Open(tokens[0], now)
	switch {
	case errors.Is(err, pagetoken.ErrInvalid) || (err != nil && !errors.Is(err, pagetoken.ErrExpired)):
		forbid("invalid page token")
		return pagetoken.Claims{}, false
	case c.ElicitationID != id:
		forbid("page token of another request")
		return pagetoken.Claims{}, false
	case errors.Is(err, pagetoken.ErrExpired) && (c.RequestExpires.IsZero() || now.Before(c.RequestExpires)):
		// (A token that does not say when its request expires is treated
		// as one whose request could still be decided.)
		h.refused(w, r, id, key, http.StatusForbidden, "page token expired", &finalView{
			Class: "problem", Heading: "This page is too old to send",
			Text:   []string{"Nothing was decided. Reload the page to get a fresh one, then answer again."},
			Reload: true,
		})
		return pagetoken.Claims{}, false
	}
	return c, true
}

// refuse audits a refused submission and writes a problem page.
func (h *Handler) refuse(w http.ResponseWriter, r *http.Request, id, key string, status int, reason, heading string, text ...string) {
	h.refused(w, r, id, key, status, reason, &finalView{Class: "problem", Heading: heading, Text: text})
}

// refused audits a refused submission and writes f with status. An unknown
// id or a wrong review key gets the not-found page instead, and nothing is
// recorded: only a holder of the review key adds to the audit trail.
func (h *Handler) refused(w http.ResponseWriter, r *http.Request, id, key string, status int, reason string, f *finalView) {
	err := h.svc.RefuseSubmission(r.Context(), id, key, "", reason)
	switch {
	case errors.Is(err, elicitation.ErrNotFound):
		h.notFound(w)
		return
	case err != nil:
		h.log.ErrorContext(r.Context(), "audit refused submission", "id", id, "reason", reason, "err", err)
	}
	h.write(w, status, &pageView{Title: f.Heading, Final: f})
}

// formValues are the approval form's fields (inputs named "f.<field>").
func formValues(form url.Values) map[string][]string {
	var out map[string][]string
	for k, vs := range form {
		if name, ok := strings.CutPrefix(k, formPrefix); ok {
			if out == nil {
				out = map[string][]string{}
			}
			out[name] = vs
		}
	}
	return out
}

// invalid re-renders the page (422) with what to fix and what was entered.
func (h *Handler) invalid(w http.ResponseWriter, r *http.Request, id, key string, cause error, form url.Values) {
	rv, err := h.svc.OpenReview(r.Context(), id, key)
	if err != nil {
		h.serviceError(w, r, id, err)
		return
	}
	if rv.State.Status != elicitation.StatusPending {
		status := http.StatusConflict
		if rv.State.Status == elicitation.StatusExpired {
			status = http.StatusGone
		}
		h.write(w, status, h.finalView(rv.Record, rv.State, nil))
		return
	}
	pr := &prior{selected: form["option"], form: formValues(form), fields: map[string]string{}}
	var fe *elicitation.FormError
	if errors.As(cause, &fe) {
		for _, f := range fe.Fields {
			label := f.Field
			if rv.Payload.Schema != nil {
				if sf, ok := rv.Payload.Schema.Field(f.Field); ok && sf.Title != "" {
					label = sf.Title
				}
			}
			pr.fields[f.Field] = f.Message
			pr.errors = append(pr.errors, label+" "+f.Message+".")
		}
	} else {
		msg := elicitation.PublicMessage(cause)
		pr.errors = []string{strings.ToUpper(msg[:1]) + msg[1:] + "."}
	}
	v, err := h.pendingView(rv, pr)
	if err != nil {
		h.internal(w, r, id, err)
		return
	}
	h.write(w, http.StatusUnprocessableEntity, v)
}
