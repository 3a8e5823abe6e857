package metrics

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"time"

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

// gaugeSink is a sink that records gauges as measurements: EMF, where no
// scrape reads them (Prometheus reads its gauges at each scrape: Watch).
type gaugeSink interface {
	gauge(name string, v float64, labels ...Label)
}

// RecordPending records the requests pending at now, by principal and kind
// and in all, from the pending index in (at most elicitation.MaxInbox), on
// a sink that records gauges; on another it reads nothing.
func (c *Counts) RecordPending(ctx context.Context, in elicitation.Inbox, now time.Time) error {
	g, ok := c.sink.(gaugeSink)
	if !ok {
		return nil
	}
	counts, err := pendingCounts(ctx, in, now, c.principals)
	if err != nil {
		return err
	}
	keys := slices.SortedFunc(maps.Keys(counts), func(a, b Key) int {
		return cmp.Or(cmp.Compare(a.Principal, b.Principal), cmp.Compare(a.Kind, b.Kind))
	})
	var total int64
	for _, k := range keys {
		g.gauge(RequestsPending, float64(counts[k]), Label{LabelPrincipal, k.Principal}, Label{LabelKind, string(k.Kind)})
		total += counts[k]
	}
	g.gauge(RequestsPending, float64(total))
	return nil
}

// Notified counts a send to a target of type targetType.
func (c *Counts) Notified(targetType string, delivered bool) {
	name := NotifyFailed
	if delivered {
		name = NotifySent
	}
	c.sink.count(name, Label{LabelTargetType, targetType})
}
