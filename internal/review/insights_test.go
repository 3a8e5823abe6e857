package review_test

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/boltstore"
	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/metrics"
	"github.com/mcp-elicitation/elicitation/internal/pagetoken"
	"github.com/mcp-elicitation/elicitation/internal/review"
	"github.com/mcp-elicitation/elicitation/internal/testclock"
	"github.com/mcp-elicitation/elicitation/internal/testenv"
)

// newInsightsEnv is newSignedInEnv with the Insights page, computed from
// its store as compose wires it.
func newInsightsEnv(t testing.TB) *env {
	t.Helper()
	e := &env{t: t, clock: testclock.New(t0)}
	st, err := boltstore.Open(filepath.Join(t.TempDir(), "store.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	e.store = st
	checker := testChecker()
	e.svc = elicitation.NewService(elicitation.Config{Store: st, Now: e.clock.Now, Templates: checker, SignIn: true, Policy: elicitation.ReviewerPolicy{BarOwner: true}})
	if e.keys, err = pagetoken.ParseKeyring(testKeys); err != nil {
		t.Fatal(err)
	}
	e.handler = review.New(review.Options{Service: e.svc, Tokens: e.keys, Now: e.clock.Now, Templates: checker,
		NewRenderID: func() string { return fmt.Sprintf("render-%04d", e.renders.Add(1)) },
		Insights: func(ctx context.Context, now time.Time) (metrics.Insights, error) {
			return metrics.ComputeInsights(ctx, st, now)
		}})
	e.mux = http.NewServeMux()
	e.handler.Routes(e.mux)
	e.srv = newServer(t, fakeSignIn(e.mux))
	return e
}

// seedInsights makes a week of requests: created 8 days ago (outside the
// window), then per agent approvals decided after 30 s, 90 s and 10 min,
// a decline, a cancel, an expiry and two pending.
func seedInsights(t testing.TB, e *env) {
	t.Helper()
	ctx := context.Background()
	e.clock.Set(t0.Add(-8 * 24 * time.Hour))
	e.create("deploy-bot", elicitation.Input{Message: "Old", TimeoutSeconds: 60})
	e.clock.Set(t0.Add(-time.Hour))
	var approvals []created
	for i := range 3 {
		approvals = append(approvals, e.create("deploy-bot", elicitation.Input{Message: fmt.Sprintf("Deploy %d", i), TimeoutSeconds: 3600}))
	}
	decline := e.create("deploy-bot", elicitation.Input{Message: "Drop the table", TimeoutSeconds: 3600})
	cancel := e.create("ci-bot", elicitation.Input{Message: "Rerun CI", TimeoutSeconds: 3600})
	e.create("ci-bot", elicitation.Input{Message: "Expires", TimeoutSeconds: 60})
	if _, err := e.svc.Create(ctx, "ci-bot", elicitation.KindSelection, elicitation.Input{Message: "Pick a region", Options: raws(`{"id":"eu"}`, `{"id":"us"}`), TimeoutSeconds: 7200}); err != nil {
		t.Fatal(err)
	}
	e.create("deploy-bot", elicitation.Input{Message: "Pending", TimeoutSeconds: 7200})
	for i, after := range []time.Duration{30 * time.Second, 60 * time.Second, 510 * time.Second} {
		e.clock.Add(after)
		if r := e.decideAs("bob", approvals[i], "submitted"); r.Status != http.StatusOK {
			t.Fatalf("approve %d: %d", i, r.Status)
		}
	}
	if r := e.decideAs("bob", decline, "declined"); r.Status != http.StatusOK {
		t.Fatalf("decline: %d", r.Status)
	}
	if _, err := e.svc.Cancel(ctx, "ci-bot", cancel.ID); err != nil {
		t.Fatal(err)
	}
	e.clock.Set(t0)
}

var figureRE = regexp.MustCompile(`<dt>([^<]+)</dt><dd>(.*?)</dd>`)

// figures reads the page's figure lists in order: one map per list.
func figures(body string) []map[string]string {
	var out []map[string]string
	for _, dl := range strings.Split(body, `<dl class="figures">`)[1:] {
		m := map[string]string{}
		for _, f := range figureRE.FindAllStringSubmatch(dl[:strings.Index(dl, "</dl>")], -1) {
			m[f[1]] = f[2]
		}
		out = append(out, m)
	}
	return out
}

// TestInsights: a signed-in reviewer's Insights page counts the last 7
// days per agent and kind (created, approved, declined, expired,
// canceled, pending now) with the median and 90th percentile time to
// decision, leaves out what was created before, and links back to the
// inbox, which links to it; without sign-in there is nothing to show.
func TestInsights(t *testing.T) {
	t.Parallel()
	e := newInsightsEnv(t)
	seedInsights(t, e)
	r := e.getAs("bob", "/review/insights")
	if r.Status != http.StatusOK {
		t.Fatalf("GET /review/insights: %d\n%s", r.Status, r.Body)
	}
	checkHeaders(t, r)
	fs := figures(r.Body)
	if len(fs) != 4 {
		t.Fatalf("%d figure lists, want the total and three rows:\n%s", len(fs), r.Body)
	}
	want := []map[string]string{
		{"Created": "8", "Approved": "3", "Declined": "1", "Expired": "1", "Canceled": "1", "Pending now": "2"},
		{"Created": "5", "Approved": "3", "Declined": "1", "Expired": "0", "Canceled": "0", "Pending now": "1"},
		{"Created": "2", "Approved": "0", "Declined": "0", "Expired": "1", "Canceled": "1", "Pending now": "0"},
		{"Created": "1", "Approved": "0", "Declined": "0", "Expired": "0", "Canceled": "0", "Pending now": "1"},
	}
	for i, w := range want {
		for k, v := range w {
			if fs[i][k] != v {
				t.Errorf("list %d: %s = %q, want %q", i, k, fs[i][k], v)
			}
		}
	}
	// Decisions after 30 s, 90 s, 10 min and 10 min (the decline).
	if got := fs[0]["Time to decision"]; !strings.HasPrefix(got, "median 1m30s, 90th percentile 10m0s") || !strings.Contains(got, "(4 decisions)") {
		t.Errorf("time to decision %q", got)
	}
	if got := fs[2]["Time to decision"]; got != "no decision yet" {
		t.Errorf("ci-bot's time to decision %q", got)
	}
	for _, s := range []string{`<a href="./">Back to the inbox</a>`, "deploy-bot", "ci-bot", "Choose for the agent"} {
		if !strings.Contains(r.Body, s) {
			t.Errorf("the page lacks %s", s)
		}
	}
	if inbox := e.getAs("bob", "/review/"); !strings.Contains(inbox.Body, `<a href="insights">Insights</a>`) {
		t.Error("the inbox does not link to Insights")
	}
	compareGolden(t, "insights-bob", r.Body)

	// Without a session, and on a server without the page: nothing.
	if r := e.get("/review/insights"); r.Status != http.StatusNotFound || strings.Contains(r.Body, "deploy-bot") || !strings.Contains(r.Body, "Insights need reviewer sign-in") {
		t.Errorf("without a session: %d\n%s", r.Status, r.Body)
	}
	plain := newEnv(t)
	if r := plain.get("/review/insights"); r.Status != http.StatusNotFound || !strings.Contains(r.Body, "Insights need reviewer sign-in") {
		t.Errorf("without sign-in: %d", r.Status)
	}
	compareGolden(t, "insights-no-sign-in", plain.get("/review/insights").Body)
}

// TestInsightsChromium: the page on a 375 px phone in both schemes, no
// sideways scroll and no serious axe-core violation.
func TestInsightsChromium(t *testing.T) {
	testenv.Slow(t, "Chromium")
	t.Parallel()
	e := newInsightsEnv(t)
	seedInsights(t, e)
	e.create("a-principal-with-a-very-long-name-that-would-not-fit-on-a-phone-screen-at-all", elicitation.Input{Message: "Long", TimeoutSeconds: 600})
	runBrowser(t, e, []flow{
		{"name": "insights-375-light", "do": "insights", "viewport": "p375", "scheme": "light", "as": "bob"},
		{"name": "insights-375-dark", "do": "insights", "viewport": "p375", "scheme": "dark", "as": "bob"},
		{"name": "insights-no-sign-in-375-light", "do": "axe", "viewport": "p375", "scheme": "light", "url": "/review/insights"},
	}, t.TempDir())
}

// TestInsightsComputedOnce: every Insights page within a minute shows one
// computation (each reads up to metrics.MaxInsightsReads requests), so
// that a reviewer reloading it, or all of them at once, do not multiply
// the store's reads; a minute later the next page computes afresh.
func TestInsightsComputedOnce(t *testing.T) {
	t.Parallel()
	var computed atomic.Int64
	var e *env
	e = newSignedInEnv(t, func(o *review.Options) {
		o.Insights = func(ctx context.Context, now time.Time) (metrics.Insights, error) {
			computed.Add(1)
			return metrics.ComputeInsights(ctx, e.store, now)
		}
	})
	e.create("deploy-bot", elicitation.Input{Message: "Deploy?"})
	for i, who := range []string{"bob", "bob", "carol", "bob"} {
		if r := e.getAs(who, "/review/insights"); r.Status != http.StatusOK {
			t.Fatalf("GET %d as %s: %d", i, who, r.Status)
		}
		e.clock.Add(10 * time.Second)
	}
	if n := computed.Load(); n != 1 {
		t.Errorf("four pages within a minute computed the figures %d times, want once", n)
	}
	e.clock.Add(time.Minute)
	if r := e.getAs("carol", "/review/insights"); r.Status != http.StatusOK || computed.Load() != 2 {
		t.Errorf("a minute later: %d, computed %d times, want twice", r.Status, computed.Load())
	}
}
