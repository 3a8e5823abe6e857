package notify

import (
	"fmt"
	"sync"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/ratelimit"
)

// NoticeLimits bound the notices a target that reaches people (slack,
// email, ntfy; not a webhook, which feeds a system) is sent, counted in
// notices: of one principal's requests (PerPrincipal), and of all of them
// (All). Each notice counts once, at its first attempt. A notice past
// either bound is not sent: it leaves the outbox as dropped, with the
// reason in the request's audit trail and the log; the request itself
// still waits in the reviewer's inbox. So one agent (an API key's
// principal) that creates and cancels requests in a loop spends its own
// share of a reviewer's attention, and no flood of principals together
// gets past All.
type NoticeLimits struct {
	PerPrincipal, All ratelimit.Rate
}

// DefaultNoticeLimits: to each target, 60 notices an hour of one
// principal's requests (all 60 may come at once, then one a minute), and
// 600 an hour in all.
var DefaultNoticeLimits = NoticeLimits{
	PerPrincipal: ratelimit.Rate{Count: 60, Per: time.Hour},
	All:          ratelimit.Rate{Count: 600, Per: time.Hour},
}

// maxBudgetOwners bounds the principals counted for one target; past it,
// the least recently seen is forgotten (All still bounds the target).
const maxBudgetOwners = 10000

// budgets are a Deliverer's counts of each target's notices: a
// ratelimit.Limiter per target, its principals the sources.
type budgets struct {
	mu       sync.Mutex
	byTarget map[string]*ratelimit.Limiter
}

// limits are d.Limits, where zero the configuration's (Config.Limits),
// where zero DefaultNoticeLimits.
func (d *Deliverer) limits() NoticeLimits {
	l, cfg := d.Limits, d.Targets.cfg.Limits.notices()
	if !l.PerPrincipal.Valid() {
		l.PerPrincipal = cfg.PerPrincipal
	}
	if !l.All.Valid() {
		l.All = cfg.All
	}
	return l
}

// overBound spends one notice of owner's requests to target at now, and
// says why not ("" when it may be sent).
func (d *Deliverer) overBound(target, owner string, now time.Time) string {
	switch d.Targets.Type(target) {
	case TypeSlack, TypeEmail, TypeNtfy:
	default:
		return ""
	}
	lim := d.limits()
	switch _, by := d.budget.of(target, lim).Spend(owner, now); by {
	case ratelimit.BySource:
		return fmt.Sprintf("%s's requests have had their %d notices to %s in %s", owner, lim.PerPrincipal.Count, target, elicitation.HumanDuration(lim.PerPrincipal.Per))
	case ratelimit.InAll:
		return fmt.Sprintf("%s has had its %d notices in %s, of all requests", target, lim.All.Count, elicitation.HumanDuration(lim.All.Per))
	}
	return ""
}

// of is target's counts, made at lim the first time.
func (b *budgets) of(target string, lim NoticeLimits) *ratelimit.Limiter {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.byTarget == nil {
		b.byTarget = map[string]*ratelimit.Limiter{}
	}
	l := b.byTarget[target]
	if l == nil {
		l = ratelimit.New(lim.PerPrincipal, lim.All, maxBudgetOwners)
		b.byTarget[target] = l
	}
	return l
}
