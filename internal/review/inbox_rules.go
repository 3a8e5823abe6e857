package review

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// The signed-in reviewer's standing approvals, listed under their inbox
// (GET /review/) with a Revoke button for each live one: a POST to the
// inbox's own address (POST /review/, origin-checked like a decision),
// served by the submit handler, which revokes and sends the reviewer back
// to the inbox. The form carries a page token for that rule and the
// reviewer (formtoken.go). A revoke is in the store at once: the next create in any
// process reads it.

type rulesView struct {
	Rules   []ruleRow
	Problem string
}

type ruleRow struct {
	ID, For, Tool, Constraints string
	Picks                      string
	Uses, Status               string
	Until, UntilISO            string
	Live                       bool
	// Token is the Revoke form's page token (formtoken.go).
	Token string
}

// standingRules is the inbox's list of the reviewer's rules; nil when they
// have none.
func (h *Handler) standingRules(ctx context.Context) *rulesView {
	rs, err := h.Service.Rules(ctx)
	if err != nil {
		h.Logger.ErrorContext(ctx, "review inbox: standing approvals", "err", err)
		return &rulesView{Problem: "Your standing approvals could not be listed. Reload the page in a moment."}
	}
	if len(rs) == 0 {
		return nil
	}
	now := h.Now()
	v := &rulesView{}
	for _, r := range rs {
		row := ruleRow{
			ID: r.ID, For: r.Principal, Tool: r.Tool, Picks: strings.Join(r.SelectedIDs, ", "),
			Uses: fmt.Sprintf("%d of %d used", r.Uses, r.MaxUses), Status: r.StatusAt(now), Live: r.LiveAt(now),
			Until: timeText(r.ExpiresAt), UntilISO: r.ExpiresAt.UTC().Format(time.RFC3339),
		}
		var cs []string
		for _, c := range r.Constraints {
			cs = append(cs, constraintText(c))
		}
		row.Constraints = strings.Join(cs, "; ")
		if row.Live {
			row.Token = h.formToken(ctx, formSubject(formRevoke, r.ID))
		}
		v.Rules = append(v.Rules, row)
	}
	return v
}

// constraintText is a constraint as the inbox shows it.
func constraintText(c elicitation.Constraint) string {
	vals := make([]string, len(c.Values))
	for i, v := range c.Values {
		vals[i] = truncateText(string(v), maxValueShown)
	}
	path := c.PathString()
	switch c.Op {
	case elicitation.ConstraintEqual:
		return path + " = " + strings.Join(vals, "")
	case elicitation.ConstraintOneOf:
		return path + " one of " + strings.Join(vals, ", ")
	case elicitation.ConstraintPrefix:
		return path + " starts with " + truncateText(fmt.Sprintf("%q", c.Prefix), maxValueShown)
	case elicitation.ConstraintRange:
		lo, hi := "any", "any"
		if c.Min != nil {
			lo = fmt.Sprint(*c.Min)
		}
		if c.Max != nil {
			hi = fmt.Sprint(*c.Max)
		}
		return path + " within " + lo + " to " + hi
	}
	return path
}

// serveRevoke handles POST /review/: the Revoke button of a standing
// approval in the inbox.
func (h *Handler) serveRevoke(w http.ResponseWriter, r *http.Request, form url.Values) {
	if len(form["revoke"]) != 1 {
		h.revokeProblem(w, http.StatusBadRequest, "The submission could not be read", "Nothing was revoked. Reload your inbox and try again.")
		return
	}
	if p := h.formRefusal(r.Context(), form["token"], formSubject(formRevoke, form.Get("revoke"))); p != "" {
		h.revokeProblem(w, http.StatusForbidden, "This revoke cannot be sent", p)
		return
	}
	_, err := h.Service.RevokeRule(r.Context(), form.Get("revoke"))
	switch {
	case errors.Is(err, elicitation.ErrNotFound):
		h.revokeProblem(w, http.StatusNotFound, "Standing approval not found", "You have no standing approval with this id. Reload your inbox.")
		return
	case elicitation.CodeOf(err) == elicitation.CodeForbidden:
		h.revokeProblem(w, http.StatusForbidden, "Sign in to revoke", "Nothing was revoked. Sign in, then revoke it from your inbox.")
		return
	case err != nil:
		h.Logger.ErrorContext(r.Context(), "standing approval revoke", "err", err)
		h.revokeProblem(w, http.StatusInternalServerError, "Something went wrong", "The standing approval may not be revoked. Reload your inbox and try again in a moment.")
		return
	}
	// Back to the inbox (relative, so that it keeps any path prefix), which
	// lists the rule as revoked.
	h.headers(w)
	w.Header().Set("Location", "./")
	w.WriteHeader(http.StatusSeeOther)
}

// revokeProblem writes the inbox's problem page for a revoke that failed.
func (h *Handler) revokeProblem(w http.ResponseWriter, status int, heading, text string) {
	h.writeShell(w, status, "inbox", &inboxView{shell: problemShell("", heading, inboxLink, text)})
}
