package review

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// Out of office: the inbox's section lists the signed-in reviewer's
// delegations (to them and from them) and its form creates one (POST
// /review/ with delegate, to, start, end) or ends one (end-delegation=ID).
// Both POSTs are origin-checked (serveInboxPost), carry a page token for
// the form (and the delegation it ends) and the reviewer (formtoken.go),
// and act for the signed-in reviewer only; the Service validates (elicitation.Delegate). Times are
// datetime-local values read in UTC, as the review page's.

// delegationView is the inbox's out-of-office section.
type delegationView struct {
	Yours, ToYou []delegationRow
	// Token is the Delegate form's page token (formtoken.go).
	Token string
}

type delegationRow struct {
	ID, Who, Window string
	// Token is the End form's page token, for the reviewer's own.
	Token string
}

// dateTimeLocal is the layout of a datetime-local value (seconds optional).
const dateTimeLocal = "2006-01-02T15:04"

// delegationSection reads id's delegations for the inbox; nil when they
// cannot be read (logged: the inbox still lists the requests).
func (h *Handler) delegationSection(ctx context.Context, id elicitation.Identity) *delegationView {
	from, to, err := h.Service.ReviewerDelegations(ctx, id)
	if err != nil {
		h.Logger.ErrorContext(ctx, "review inbox delegations", "err", err)
		return nil
	}
	v := &delegationView{Token: h.formToken(ctx, formSubject(formDelegate, ""))}
	now := h.Now()
	for _, d := range from {
		v.Yours = append(v.Yours, delegationRow{ID: d.ID, Who: d.To, Window: windowText(d, now), Token: h.formToken(ctx, formSubject(formEndDelegation, d.ID))})
	}
	for _, d := range to {
		v.ToYou = append(v.ToYou, delegationRow{ID: d.ID, Who: d.From, Window: windowText(d, now)})
	}
	return v
}

func windowText(d elicitation.Delegation, now time.Time) string {
	const f = "2 Jan 2006 15:04 UTC"
	if d.ActiveAt(now) {
		return "until " + d.End.UTC().Format(f)
	}
	return "from " + d.Start.UTC().Format(f) + " until " + d.End.UTC().Format(f)
}

// serveDelegation creates or ends a delegation of the signed-in reviewer
// and sends them back to the inbox (303), or says what is wrong (nothing
// written).
func (h *Handler) serveDelegation(w http.ResponseWriter, r *http.Request, id elicitation.Identity, form url.Values) {
	who := id.Principal()
	subject := formSubject(formDelegate, "")
	if form.Has(formEndDelegation) {
		subject = formSubject(formEndDelegation, form.Get(formEndDelegation))
	}
	if p := h.formRefusal(r.Context(), form["token"], subject); p != "" {
		h.batchProblem(w, http.StatusForbidden, who, "This cannot be sent", p)
		return
	}
	var err error
	if did := form.Get(formEndDelegation); did != "" {
		_, err = h.Service.EndDelegation(r.Context(), id, did)
	} else {
		in, bad := delegationInput(form)
		if bad != "" {
			h.batchProblem(w, http.StatusBadRequest, who, "This delegation cannot be made", bad+" Nothing was changed.")
			return
		}
		_, err = h.Service.Delegate(r.Context(), id, in)
	}
	switch {
	case err == nil:
		h.headers(w)
		w.Header().Set("Location", "./#delegation")
		w.WriteHeader(http.StatusSeeOther)
	case elicitation.CodeOf(err) == elicitation.CodeInvalidArgument:
		h.batchProblem(w, http.StatusBadRequest, who, "This delegation cannot be made", sentence(elicitation.PublicMessage(err))+" Nothing was changed.")
	case elicitation.CodeOf(err) == elicitation.CodeNotFound:
		h.batchProblem(w, http.StatusNotFound, who, "No such delegation", "You have no delegation by that id to end. Nothing was changed.")
	case elicitation.CodeOf(err) == elicitation.CodeConflict:
		h.batchProblem(w, http.StatusConflict, who, "This delegation has ended", "It ended already. Nothing was changed.")
	default:
		h.Logger.ErrorContext(r.Context(), "review delegation", "err", err)
		h.batchProblem(w, http.StatusInternalServerError, who, "Something went wrong", "The server could not save this. Nothing was changed. Try again in a moment.")
	}
}

// delegationInput reads the form's to, start (empty: now) and end, or
// says what is wrong with them.
func delegationInput(form url.Values) (elicitation.DelegationInput, string) {
	for _, k := range []string{"to", "start", "end"} {
		if len(form[k]) > 1 {
			return elicitation.DelegationInput{}, "Give one " + k + "."
		}
	}
	in := elicitation.DelegationInput{To: form.Get("to")}
	for _, f := range []struct {
		name, label string
		t           *time.Time
	}{{"start", "start", &in.Start}, {"end", "end", &in.End}} {
		v := strings.TrimSpace(form.Get(f.name))
		if v == "" {
			continue
		}
		t, err := time.ParseInLocation(dateTimeLocal, v, time.UTC)
		if err != nil {
			if t, err = time.ParseInLocation(dateTimeLocal+":05", v, time.UTC); err != nil {
				return in, "The " + f.label + " must be a date and time such as 2026-12-24T18:00 (UTC)."
			}
		}
		*f.t = t
	}
	if in.End.IsZero() {
		return in, "Give when the delegation ends."
	}
	return in, ""
}

// sentence is msg with a capital and a full stop.
func sentence(msg string) string {
	if msg == "" {
		return msg
	}
	return strings.ToUpper(msg[:1]) + msg[1:] + "."
}
