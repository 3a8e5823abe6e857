package notify

import (
	"fmt"
	"sync"
	"time"

	"golang.org/x/time/rate"

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
// those whose count has run back to nothing are forgotten (and, if none
// has, all of them: All still bounds the target).
const maxBudgetOwners = 10000

// budgets are a Deliverer's counts of each target's notices.
type budgets struct {
	mu       sync.Mutex
	byTarget map[string]*budget
}

type budget struct {
	all    *rate.Limiter
	owners map[string]*rate.Limiter
}

func limiter(r ratelimit.Rate) *rate.Limiter {
	return rate.NewLimiter(rate.Limit(float64(r.Count)/r.Per.Seconds()), r.Count)
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
	d.budget.mu.Lock()
	defer d.budget.mu.Unlock()
	if d.budget.byTarget == nil {
		d.budget.byTarget = map[string]*budget{}
	}
	b := d.budget.byTarget[target]
	if b == nil {
		b = &budget{all: limiter(lim.All), owners: map[string]*rate.Limiter{}}
		d.budget.byTarget[target] = b
	}
	own := b.owners[owner]
	if own == nil {
		b.forget(now, lim.PerPrincipal.Count)
		own = limiter(lim.PerPrincipal)
		b.owners[owner] = own
	}
	r := own.ReserveN(now, 1)
	if r.DelayFrom(now) > 0 {
		r.CancelAt(now)
		return fmt.Sprintf("%s's requests have had their %d notices to %s in %s", owner, lim.PerPrincipal.Count, target, elicitation.HumanDuration(lim.PerPrincipal.Per))
	}
	if all := b.all.ReserveN(now, 1); all.DelayFrom(now) > 0 {
		all.CancelAt(now)
		r.CancelAt(now)
		return fmt.Sprintf("%s has had its %d notices in %s, of all requests", target, lim.All.Count, elicitation.HumanDuration(lim.All.Per))
	}
	return ""
}

// forget makes room for one more principal: those whose count has run
// back to nothing (full buckets of burst) go first.
func (b *budget) forget(now time.Time, burst int) {
	if len(b.owners) < maxBudgetOwners {
		return
	}
	for o, l := range b.owners {
		if l.TokensAt(now) >= float64(burst) {
			delete(b.owners, o)
		}
	}
	if len(b.owners) >= maxBudgetOwners {
		clear(b.owners)
	}
}
