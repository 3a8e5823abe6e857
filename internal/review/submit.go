package review

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/pagetoken"
	"github.com/mcp-elicitation/elicitation/internal/ratelimit"
)

// serveSubmit handles POST /review/{id}/{key}. The order of checks: the
// body's size and shape, then either a filter round trip (a render, like a
// GET: the page again with the picks kept) or an answer: the page token
// (present, authentic, for this request, not expired), then the Service
// (review key, state, validation, exactly-once). Every refusal before the
// Service is audited (the outcomes table names its reason); the Service
// audits its own. Nothing is decided unless the Service accepts the
// submission.
func (h *Handler) serveSubmit(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		h.respond(w, r, outMethod, reply{})
		return
	}
	id, key, ok, root := pathIDs(r)
	if root {
		h.serveInboxPost(w, r) // POST /review/: the inbox's forms (inbox.go)
		return
	}
	if !ok {
		h.respond(w, r, outNotFound, reply{})
		return
	}
	x := reply{id: id, key: key}
	if err := CheckOrigin(r, h.TrustedOrigins); err != nil {
		h.Logger.WarnContext(r.Context(), "review submission refused", "elicitationId", id, "err", err)
		h.respond(w, r, outCrossOrigin, x)
		return
	}
	form, o := h.readForm(w, r)
	if o == outRecorded && repeated(form) {
		o = outMalformed
	}
	if o != outRecorded {
		h.respond(w, r, o, x)
		return
	}
	if form.Has("filter") {
		h.reshow(w, r, x, outFiltered, priorOf(form, nil))
		return
	}
	if wait := h.spend(r, 1); wait > 0 {
		ratelimit.RetryAfter(w.Header(), wait)
		h.respond(w, r, outTooMany, x)
		return
	}
	claims, o, reason := h.checkToken(r.Context(), id, form["token"])
	if o != outRecorded {
		x.refusal = reason
		h.respond(w, r, o, x)
		return
	}
	sub := elicitation.Submission{ID: claims.RenderID, Decision: elicitation.Decision(form.Get("decision")), Comment: form.Get("comment")}
	if sub.Decision != elicitation.DecisionDeclined {
		sub.SelectedIDs = form["option"]
		sub.Form = formValues(form)
	}
	rule, err := ruleInput(form, h.Now())
	if err != nil {
		h.reshow(w, r, x, outInvalid, priorOf(form, err))
		return
	}
	sub.Rule = rule
	st, err := h.Service.Submit(r.Context(), id, key, sub)
	ruleLost := errors.Is(err, elicitation.ErrRuleNotSaved)
	if ruleLost {
		// The approval stands; the page says the rule was not made.
		h.Logger.ErrorContext(r.Context(), "standing approval not saved", "elicitationId", id, "err", err)
		err = nil
	}
	switch o := submitted(err, st, sub); o {
	case outInvalid:
		h.reshow(w, r, x, outInvalid, priorOf(form, err))
	case outRecorded:
		rv, rerr := h.Service.Receipt(r.Context(), id, key)
		if rerr != nil {
			// The decision is recorded; only the read-back failed.
			h.Logger.WarnContext(r.Context(), "review receipt", "elicitationId", id, "err", rerr)
			rv = elicitation.Review{}
		}
		h.respond(w, r, o, reply{id: id, key: key, review: rv, state: st, sub: sub, ruleLost: ruleLost})
	default:
		h.respond(w, r, o, reply{id: id, key: key, state: st, err: err})
	}
}

// singleFields are the answer's fields the page sends at most once: the
// button pressed, the comment, the standing approval's switch and terms.
var singleFields = []string{"decision", "comment", ruleOn, ruleFor, ruleUses}

// repeated reports whether form sends one of singleFields more than once:
// which value the reviewer meant cannot be known, so nothing is decided.
func repeated(form url.Values) bool {
	return slices.ContainsFunc(singleFields, func(k string) bool { return len(form[k]) > 1 })
}

// readForm reads and bounds the body of a POST: outRecorded means the
// form may go on; any other outcome is the refusal (a body over
// MaxBodyBytes, a value over MaxValueBytes, a body that is not a form).
func (h *Handler) readForm(w http.ResponseWriter, r *http.Request) (url.Values, outcome) {
	r.Body = http.MaxBytesReader(w, r.Body, h.MaxBodyBytes)
	if err := r.ParseForm(); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return nil, outBodyTooLarge
		}
		return nil, outMalformed
	}
	for k, vs := range r.PostForm {
		for _, v := range vs {
			if len(k)+len(v) > h.MaxValueBytes {
				return nil, outValueTooLarge
			}
		}
	}
	return r.PostForm, outRecorded
}

// reshow renders the request again after a POST that decided nothing (a
// filter, a refused answer) with what the reviewer had entered, or its
// final state if it can no longer be answered.
func (h *Handler) reshow(w http.ResponseWriter, r *http.Request, x reply, o outcome, pr func(elicitation.Payload) *prior) {
	rv, err := h.Service.OpenReview(r.Context(), x.id, x.key)
	if err != nil {
		x.err = err
		h.respond(w, r, failed(err), x)
		return
	}
	x.review = rv
	if s := shown(rv.State, true); s != outPending {
		h.respond(w, r, s, x)
		return
	}
	x.prior = pr(rv.Payload)
	h.respond(w, r, o, x)
}

// priorOf is what the page shows again: the picks, form values, comment
// and filter the reviewer sent, and, for a refused answer, what to fix.
func priorOf(form url.Values, cause error) func(elicitation.Payload) *prior {
	return func(p elicitation.Payload) *prior {
		pr := &prior{selected: form["option"], form: formValues(form), fields: map[string]string{}, comment: form.Get("comment"), standing: standingSent(form)}
		if form.Get("filter") != "clear" {
			pr.query = strings.TrimSpace(form.Get("q"))
		}
		if cause == nil {
			return pr
		}
		var fe *elicitation.FormError
		if !errors.As(cause, &fe) {
			pr.errors = []string{sentence(elicitation.PublicMessage(cause))}
			return pr
		}
		for _, f := range fe.Fields {
			label := f.Field
			if p.Schema != nil {
				if sf, ok := p.Schema.Field(f.Field); ok && sf.Title != "" {
					label = sf.Title
				}
			}
			pr.fields[f.Field] = f.Message
			pr.errors = append(pr.errors, label+" "+f.Message+".")
		}
		return pr
	}
}

// checkToken checks the page token: outRecorded means the submission may
// go on to the Service; any other outcome is the refusal, with its audit
// reason. An authentic token past its expiry is refused with "reload the
// page" while the request could still be decided; once the request itself
// has expired it goes on, because the Service can then only answer 410, or
// repeat the success of the winning submission. With a signed-in reviewer,
// the token must be one rendered for them (tokenReviewer): a token of
// another reviewer's page, or one rendered without sign-in, is refused, so
// one person cannot send another's approval from their own session.
func (h *Handler) checkToken(ctx context.Context, id string, tokens []string) (pagetoken.Claims, outcome, string) {
	if len(tokens) == 0 || tokens[0] == "" {
		return pagetoken.Claims{}, outTokenInvalid, "missing page token"
	}
	if len(tokens) > 1 {
		return pagetoken.Claims{}, outTokenInvalid, "more than one page token"
	}
	now := h.Now()
	reviewer := tokenReviewer(ctx)
	signedIn := reviewer != ""
	c, err := h.Tokens.Open(tokens[0], now)
	switch {
	case errors.Is(err, pagetoken.ErrInvalid) || (err != nil && !errors.Is(err, pagetoken.ErrExpired)):
		return pagetoken.Claims{}, outTokenInvalid, "invalid page token"
	case c.ElicitationID != id:
		return pagetoken.Claims{}, outTokenInvalid, "page token of another request"
	case signedIn && subtle.ConstantTimeCompare([]byte(c.Reviewer), []byte(reviewer)) != 1:
		return pagetoken.Claims{}, outTokenInvalid, "page token of another reviewer"
	case errors.Is(err, pagetoken.ErrExpired) && (c.RequestExpires.IsZero() || now.Before(c.RequestExpires)):
		// (A token that does not say when its request expires is treated
		// as one whose request could still be decided.)
		return pagetoken.Claims{}, outTokenExpired, ""
	}
	return c, outRecorded, ""
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

// tokenReviewer is what a page token binds of the signed-in reviewer in
// ctx: a digest of the issuer and the subject (128 bits, so that the page
// carries no address), or "" without sign-in.
func tokenReviewer(ctx context.Context) string {
	id, ok := elicitation.IdentityFrom(ctx)
	if !ok {
		return ""
	}
	sum := sha256.Sum256([]byte("elicitation page token reviewer\x00" + id.Issuer + "\x00" + id.Subject))
	return base64.RawURLEncoding.EncodeToString(sum[:16])
}
