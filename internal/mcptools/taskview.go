package mcptools

import (
	"fmt"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// Task statuses (both flavours).
const (
	statusWorking       = "working"
	statusInputRequired = "input_required"
	statusCompleted     = "completed"
	statusFailed        = "failed"
	statusCancelled     = "cancelled"
)

// view is a request seen as a task.
type view struct {
	ID        string
	Status    string
	Message   string
	Created   time.Time
	Updated   time.Time
	TTL       time.Duration
	hasResult bool // the result tool gives an answer (decided or expired)
	pending   bool
}

// viewOf maps a request's state (its status derived at now) to its task:
// the one place the mapping is decided, for both flavours. A decision,
// even a decline, completes the task (the result says which); a cancel
// cancels it; an expiry fails a 2025-11-25 task (its result is the result
// tool's expired error, and that flavour calls an isError result failed)
// and completes a 2026-07-28 one (that flavour keeps failed for JSON-RPC
// errors and returns isError results as completed).
func viewOf(st elicitation.State, f era) view {
	v := view{ID: st.ID, Created: st.CreatedAt.UTC(), Updated: st.CreatedAt.UTC(), TTL: st.ExpiresAt.Sub(st.CreatedAt)}
	if !st.DecidedAt.IsZero() {
		v.Updated = st.DecidedAt.UTC()
	}
	switch {
	case st.Status == elicitation.StatusPending:
		v.Status, v.pending = statusWorking, true
		v.Message = fmt.Sprintf("Waiting for a human to answer on the review page (the reviewUrl of the creation result); the task ends when they do, or when the request expires at %s.", stamp(st.ExpiresAt))
	case st.Status == elicitation.StatusExpired:
		v.Updated, v.hasResult = st.ExpiresAt.UTC(), true
		v.Status = statusFailed
		if f == eraSessionless {
			v.Status = statusCompleted
		}
		v.Message = fmt.Sprintf("No human answered before the request expired at %s: ask again with a new request if you still need an answer (a longer timeoutSeconds gives the human more time).", stamp(st.ExpiresAt))
	case st.Status == elicitation.StatusCanceled:
		v.Status = statusCancelled
		v.Message = "The request was withdrawn (tasks/cancel or elicit_cancel): the review page no longer accepts an answer, and none will come."
	case st.Decision == elicitation.DecisionDeclined:
		v.Status, v.hasResult = statusCompleted, true
		v.Message = "The human declined: read their comment in the result, then refine the request and ask again, or stop."
	default:
		v.Status, v.hasResult = statusCompleted, true
		v.Message = "The human answered: the result holds the decision."
	}
	return v
}

// PollInterval is the interval suggested to a host polling a task that is
// still working (pollInterval, pollIntervalMs), for a request created at
// created that expires at expires, asked at now: the one place it is
// decided. It is first while the request is young (first × 12: the first
// minute at the default 5 s), then a twelfth of the request's age, so that
// an answer reaches a polling host at most about 8% of the wait later, up
// to MaxPollInterval; and never past the time the request has left, so
// that the host learns of its expiry when it comes (but not under a
// second, or first if that is shorter). A host that listens for the
// status notifications is told at once either way.
func PollInterval(first time.Duration, created, expires, now time.Time) time.Duration {
	d := min(max(first, now.Sub(created)/12), max(first, MaxPollInterval))
	return max(min(d, expires.Sub(now)), min(first, time.Second))
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }
