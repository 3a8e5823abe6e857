package metrics

import (
	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/notify"
)

// Label is one label (dimension) of a measurement.
type Label struct{ Name, Value string }

// sink is an encoding of the measurements: it adds to a counter or
// records a time to decision.
type sink interface {
	count(name string, labels ...Label)
	seconds(name string, v float64, labels ...Label)
}

// Counts decides what is counted, for either encoding: it is the
// Service's elicitation.Observer and the deliverer's notify.Observer.
type Counts struct {
	sink       sink
	principals *principals
}

var (
	_ elicitation.Observer = (*Counts)(nil)
	_ notify.Observer      = (*Counts)(nil)
)

func newCounts(s sink, maxPrincipals int) *Counts {
	return &Counts{sink: s, principals: newPrincipals(maxPrincipals)}
}

func (c *Counts) labels(st elicitation.State) []Label {
	return []Label{{LabelPrincipal, c.principals.label(st.Owner)}, {LabelKind, string(st.Kind)}}
}

// Created counts a new request.
func (c *Counts) Created(st elicitation.State) { c.sink.count(RequestsCreated, c.labels(st)...) }

// Resolved counts an approval, a decline or a cancel, and a decision's
// time from creation.
func (c *Counts) Resolved(st elicitation.State) {
	ls := c.labels(st)
	switch st.Decision {
	case elicitation.DecisionSubmitted:
		c.sink.count(RequestsApproved, ls...)
	case elicitation.DecisionDeclined:
		c.sink.count(RequestsDeclined, ls...)
	default:
		if st.Status == elicitation.StatusCanceled {
			c.sink.count(RequestsCanceled, ls...)
		}
		return
	}
	c.sink.seconds(TimeToDecision, max(st.DecidedAt.Sub(st.CreatedAt).Seconds(), 0), ls...)
}

// Expired counts a request the expiry sweep found expired.
func (c *Counts) Expired(st elicitation.State) { c.sink.count(RequestsExpired, c.labels(st)...) }

// Notified counts a send to a target of type targetType.
func (c *Counts) Notified(targetType string, delivered bool) {
	name := NotifyFailed
	if delivered {
		name = NotifySent
	}
	c.sink.count(name, Label{LabelTargetType, targetType})
}
