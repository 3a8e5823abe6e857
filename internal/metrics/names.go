// Package metrics counts what the service does for an operator to graph
// and alert on (docs/operations.md): one decision of what to count
// (Counts, an elicitation.Observer and a notify.Observer) and two
// encodings of it: OpenTelemetry metrics served to Prometheus by the local
// server (Prometheus), and CloudWatch embedded metric format lines in the
// Lambda functions' logs (EMF).
package metrics

import (
	"sync"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// The metric names, as Prometheus shows them and as EMF lines name them.
// They are stable: dashboards and alerts name them (docs/operations.md).
const (
	RequestsCreated  = "elicitation_requests_created_total"     // principal, kind
	RequestsApproved = "elicitation_requests_approved_total"    // principal, kind: decided, submitted
	RequestsDeclined = "elicitation_requests_declined_total"    // principal, kind
	RequestsExpired  = "elicitation_requests_expired_total"     // principal, kind: noticed once by the expiry sweep
	RequestsCanceled = "elicitation_requests_canceled_total"    // principal, kind
	TimeToDecision   = "elicitation_time_to_decision_seconds"   // principal, kind: histogram, approvals and declines
	RequestsPending  = "elicitation_requests_pending"           // principal, kind: gauge
	NotifySent       = "elicitation_notifications_sent_total"   // target_type
	NotifyFailed     = "elicitation_notifications_failed_total" // target_type: an attempt that failed (it may be retried)
	WaitsOpen        = "elicitation_waits_open"                 // gauge: elicit_await calls and watches waiting in this process
	WatchesOpen      = "elicitation_watches_open"               // gauge: the long watches among them (tasks' status notices, pushes)
)

// The label (dimension) names.
const (
	LabelPrincipal  = "principal"
	LabelKind       = "kind"
	LabelTargetType = "target_type"
)

// DecisionBuckets are the time-to-decision histogram's bucket bounds, in
// seconds: a person answers in seconds to hours.
var DecisionBuckets = []float64{5, 15, 30, 60, 120, 300, 600, 1800, 3600, 7200, 14400, 43200, 86400}

// DefaultMaxPrincipals is how many distinct principals get labels of
// their own by default; later ones are counted as Other.
const DefaultMaxPrincipals = 50

// Other is the principal label of the principals past the bound.
const Other = "other"

// principals bounds the principal label's values: the first max distinct
// principals seen keep their name, later ones are Other, so that a
// deployment with many OAuth clients cannot grow the series without end.
type principals struct {
	max  int
	mu   sync.Mutex
	seen map[string]struct{}
}

func newPrincipals(max int) *principals {
	if max <= 0 {
		max = DefaultMaxPrincipals
	}
	return &principals{max: max, seen: map[string]struct{}{}}
}

// label is p's label value.
func (b *principals) label(p string) string {
	if p == "" {
		p = elicitation.Anonymous
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.seen[p]; ok {
		return p
	}
	if len(b.seen) >= b.max {
		return Other
	}
	b.seen[p] = struct{}{}
	return p
}
