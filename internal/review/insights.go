package review

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/metrics"
)

// The Insights page: GET /review/insights shows a signed-in reviewer the
// figures of the last 7 days (metrics.ComputeInsights, from the store):
// per agent and kind, how many requests were created, approved, declined,
// expired and canceled, how many are pending now, and the median and 90th
// percentile time to decision. No script; on a phone, each agent's
// figures stack as a short list.

// InsightsPath is the Insights page's path segment under /review/.
const InsightsPath = "insights"

// InsightsSource computes the Insights page's figures at now.
type InsightsSource func(ctx context.Context, now time.Time) (metrics.Insights, error)

type insightsView struct {
	shell

	Since, Until, SinceISO, UntilISO string
	Capped                           string
	Total                            insightsRow
	Rows                             []insightsRow
}

type insightsRow struct {
	metrics.InsightsRow
	Who  string
	Kind string
}

func (h *Handler) serveInsights(w http.ResponseWriter, r *http.Request) {
	id, signedIn := elicitation.IdentityFrom(r.Context())
	if !signedIn || h.Insights == nil {
		h.writeShell(w, http.StatusNotFound, "insights", &insightsView{shell: problemShell("", "Insights need reviewer sign-in", nil,
			"This page shows signed-in reviewers how requests fare; this server does not sign reviewers in, so there is nothing to show.")})
		return
	}
	in, err := h.insightsNow(r.Context())
	if err != nil {
		h.Logger.ErrorContext(r.Context(), "review insights", "err", err)
		h.writeShell(w, http.StatusInternalServerError, "insights", &insightsView{shell: problemShell(id.Principal(), "Something went wrong", reloadLink,
			"The server could not count the requests. Try again in a moment.")})
		return
	}
	h.writeShell(w, http.StatusOK, "insights", insightsPage(in, id.Principal()))
}

// insightsPage is the view of in.
func insightsPage(in metrics.Insights, reviewer string) *insightsView {
	const day = "Mon 2 Jan 15:04"
	v := &insightsView{
		shell: shell{Title: "Insights", Reviewer: reviewer},
		Since: in.Since.Format(day), Until: in.Until.Format(day),
		SinceISO: in.Since.Format(time.RFC3339), UntilISO: in.Until.Format(time.RFC3339),
		Total: insightsRow{InsightsRow: rounded(in.Total)},
	}
	if in.Capped {
		v.Capped = fmt.Sprintf("There are more requests than this page reads: these figures are of the first %d the store listed.", in.Read)
	}
	for _, r := range in.Rows {
		v.Rows = append(v.Rows, insightsRow{InsightsRow: rounded(r), Who: ownerLabel(r.Principal), Kind: kindLabel(r.Kind)})
	}
	return v
}

// rounded shows times to decision to the second.
func rounded(r metrics.InsightsRow) metrics.InsightsRow {
	r.Median, r.P90 = r.Median.Round(time.Second), r.P90.Round(time.Second)
	return r
}

// insightsTTL is how long one computation of the Insights figures serves
// every reviewer's page.
const insightsTTL = time.Minute

// insightsCache is the last computation of the Insights figures.
type insightsCache struct {
	mu sync.Mutex
	at time.Time
	in metrics.Insights
	ok bool
}

// insightsNow is the Insights figures, computed at most once in
// insightsTTL for everyone: each computation reads up to
// metrics.MaxInsightsReads requests, so that a reviewer reloading the page,
// or all of them at once, add no reads (a page shows the time its figures
// are of). Pages asked meanwhile wait for the one computation; a failed
// one is not kept.
func (h *Handler) insightsNow(ctx context.Context) (metrics.Insights, error) {
	c := &h.insightsCache
	c.mu.Lock()
	defer c.mu.Unlock()
	now := h.Now().UTC()
	if c.ok && !now.Before(c.at) && now.Sub(c.at) < insightsTTL {
		return c.in, nil
	}
	in, err := h.Insights(ctx, now)
	if err != nil {
		return metrics.Insights{}, err
	}
	c.in, c.at, c.ok = in, now, true
	return in, nil
}
