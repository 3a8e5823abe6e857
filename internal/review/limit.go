package review

import (
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/ratelimit"
)

// The signed-in reviewers' share of decisions: every POST of theirs that
// may change something (a decision on a request's page, a batch's
// confirmation, a revoke, a delegation made or ended; and a decision from
// Slack, internal/slackact, through the same Limiter) spends from their
// own bucket and from everyone's (Options.Decisions, one
// internal/ratelimit.Limiter keyed by the reviewer's principal), a batch's
// confirmation one for each request it names, so that one reviewer
// repeating batches of MaxBatch decisions spends their own share, not the
// others'. Past it: 429 with Retry-After, nothing decided or changed. A
// filter round trip and a batch's first step change nothing and spend
// nothing beyond one. Without sign-in nothing is counted: each POST needs
// the request's review key and a page token of its page.

// spend charges n to the signed-in reviewer of r: 0 when they may go on,
// else how long until they could.
func (h *Handler) spend(r *http.Request, n int) time.Duration {
	id, ok := elicitation.IdentityFrom(r.Context())
	if h.Decisions == nil || !ok {
		return 0
	}
	return h.Decisions.TakeN(id.Principal(), n, h.Now())
}

// overShare charges an inbox form to the reviewer and, past their share,
// writes the page that says so and reports true.
func (h *Handler) overShare(w http.ResponseWriter, r *http.Request, who string, form url.Values) bool {
	n := 1
	if form.Has("token") && !form.Has("revoke") && !form.Has(formDelegate) && !form.Has(formEndDelegation) {
		n = max(1, min(len(form["id"]), MaxBatch)) // a batch's confirmation: its requests
	}
	wait := h.spend(r, n)
	if wait <= 0 {
		return false
	}
	h.Logger.WarnContext(r.Context(), "review inbox form refused", "reason", "reviewer over their share of decisions")
	ratelimit.RetryAfter(w.Header(), wait)
	h.batchProblem(w, http.StatusTooManyRequests, who, "Too many decisions",
		fmt.Sprintf("You have sent more decisions than this server takes in this time, so nothing was changed. Try again in %s.", elicitation.HumanDuration(wait)))
	return true
}
