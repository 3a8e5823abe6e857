package metrics

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/percentile"
)

// The Insights page's bounds: the window it covers and how many requests
// it reads at most (one read of each request's small state).
const (
	InsightsWindow   = 7 * 24 * time.Hour
	MaxInsightsReads = 2000
)

// InsightsStore is what the figures are read from: the store's listing of
// the requests it keeps and each one's state (both stores have them; no
// table of its own).
type InsightsStore interface {
	elicitation.RequestLister
	State(ctx context.Context, id string) (elicitation.State, error)
}

// Insights are the figures of the requests created in a window, computed
// from the store: what the metrics count, as a reviewer reads them.
type Insights struct {
	Since, Until time.Time
	// Rows by principal and kind, the most created first.
	Rows []InsightsRow
	// Total sums the rows; its times are over every decision.
	Total InsightsRow
	// Read is how many requests were read; Capped says that there were
	// more than MaxInsightsReads, and the figures are of those read.
	Read   int
	Capped bool
}

// InsightsRow are one principal's figures for one kind (Principal and
// Kind empty in the total).
type InsightsRow struct {
	Principal                                               string
	Kind                                                    elicitation.Kind
	Created, Approved, Declined, Expired, Canceled, Pending int
	// Decisions counts the times to decision (approvals and declines);
	// Median and P90 are of them (zero without any).
	Decisions   int
	Median, P90 time.Duration

	times []time.Duration
}

var errEnough = errors.New("enough")

// ComputeInsights reads the requests created in the window before now
// (at most MaxInsightsReads of them) and counts them.
func ComputeInsights(ctx context.Context, s InsightsStore, now time.Time) (Insights, error) {
	in := Insights{Since: now.Add(-InsightsWindow), Until: now}
	rows := map[Key]*InsightsRow{}
	err := s.EachRequest(ctx, func(id string) error {
		if in.Read == MaxInsightsReads {
			in.Capped = true
			return errEnough
		}
		st, err := s.State(ctx, id)
		if errors.Is(err, elicitation.ErrNotFound) {
			return nil // cleaned up meanwhile
		}
		if err != nil {
			return fmt.Errorf("read %s: %w", id, err)
		}
		in.Read++
		if st.CreatedAt.Before(in.Since) || st.CreatedAt.After(now) {
			return nil
		}
		k := Key{cmp.Or(st.Owner, elicitation.Anonymous), st.Kind}
		r := rows[k]
		if r == nil {
			r = &InsightsRow{Principal: k.Principal, Kind: k.Kind}
			rows[k] = r
		}
		r.add(st, now)
		in.Total.add(st, now)
		return nil
	})
	if err != nil && !errors.Is(err, errEnough) {
		return Insights{}, fmt.Errorf("insights: %w", err)
	}
	for _, r := range rows {
		r.finish()
		in.Rows = append(in.Rows, *r)
	}
	in.Total.finish()
	slices.SortFunc(in.Rows, func(a, b InsightsRow) int {
		return cmp.Or(b.Created-a.Created, cmp.Compare(a.Principal, b.Principal), cmp.Compare(a.Kind, b.Kind))
	})
	return in, nil
}

// add counts st as it stands at now.
func (r *InsightsRow) add(st elicitation.State, now time.Time) {
	r.Created++
	switch {
	case st.Decision == elicitation.DecisionSubmitted:
		r.Approved++
	case st.Decision == elicitation.DecisionDeclined:
		r.Declined++
	case st.Status == elicitation.StatusCanceled:
		r.Canceled++
	case st.StatusAt(now) == elicitation.StatusExpired:
		r.Expired++
	default:
		r.Pending++
	}
	if st.Decision != "" && !st.DecidedAt.IsZero() {
		r.times = append(r.times, max(st.DecidedAt.Sub(st.CreatedAt), 0))
	}
}

func (r *InsightsRow) finish() {
	r.Decisions = len(r.times)
	r.Median, r.P90 = percentile.Of(r.times, 50), percentile.Of(r.times, 90)
	r.times = nil
}
