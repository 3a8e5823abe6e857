package main

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/mcp-elicitation/elicitation/internal/metrics"
	"github.com/mcp-elicitation/elicitation/internal/testclock"
)

// scrape reads the server's /metrics over HTTP and parses it with
// Prometheus's own text parser.
func scrape(t *testing.T, metricsURL string) map[string]*dto.MetricFamily {
	t.Helper()
	res, err := http.Get(metricsURL)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %d", res.StatusCode)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(res.Body)
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	return fams
}

// value is the value of the series of family name with exactly labels
// (name=value pairs); 0 if there is none. A histogram's is its count.
func value(fams map[string]*dto.MetricFamily, name string, labels ...string) float64 {
	f, ok := fams[name]
	if !ok {
		return 0
	}
	want := map[string]string{}
	for i := 0; i+1 < len(labels); i += 2 {
		want[labels[i]] = labels[i+1]
	}
next:
	for _, m := range f.GetMetric() {
		if len(m.GetLabel()) != len(want) {
			continue
		}
		for _, l := range m.GetLabel() {
			if want[l.GetName()] != l.GetValue() {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.GetCounter().GetValue()
		case m.Gauge != nil:
			return m.GetGauge().GetValue()
		case m.Histogram != nil:
			return float64(m.GetHistogram().GetSampleCount())
		}
	}
	return 0
}

func TestMetricsCountWhatHappened(t *testing.T) {
	clock := testclock.New(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	cfg, err := parseServe([]string{"--addr", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0", "--data-dir", t.TempDir(), "--log-level", "warn"}, io.Discard, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	m, err := Start(context.Background(), cfg, io.Discard, WithClock(clock.Now))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	if m.MetricsURL == "" || strings.Contains(m.MetricsURL, strings.TrimPrefix(m.ReviewBase, "http://")) {
		t.Fatalf("metrics URL %q: want a listener of its own", m.MetricsURL)
	}
	// The review listener does not serve them.
	if res, err := http.Get(m.ReviewBase + "/metrics"); err != nil || res.StatusCode == http.StatusOK {
		t.Fatalf("GET review listener /metrics: %v %v, want no metrics there", res, err)
	} else {
		_ = res.Body.Close()
	}
	s := agent(t, m.MCPURL)
	before := scrape(t, m.MetricsURL)
	a, k := "principal", "kind"
	const anon = "anonymous"

	approve := call(t, s, "elicit_approval", map[string]any{"message": "Deploy?", "context": 1, "timeoutSeconds": 600})
	decline := call(t, s, "elicit_approval", map[string]any{"message": "Drop table?", "context": 2, "timeoutSeconds": 600})
	cancel := call(t, s, "elicit_selection", map[string]any{"message": "Which?", "timeoutSeconds": 600,
		"options": []any{map[string]any{"id": "a", "label": "A"}, map[string]any{"id": "b", "label": "B"}}})
	expire := call(t, s, "elicit_approval", map[string]any{"message": "Later?", "context": 3, "timeoutSeconds": 120})

	got := scrape(t, m.MetricsURL)
	for _, c := range []struct {
		kind string
		want float64
	}{{"approval", 3}, {"selection", 1}} {
		if d := value(got, metrics.RequestsCreated, a, anon, k, c.kind) - value(before, metrics.RequestsCreated, a, anon, k, c.kind); d != c.want {
			t.Errorf("%s %s moved by %v, want %v", metrics.RequestsCreated, c.kind, d, c.want)
		}
	}
	if n := value(got, metrics.RequestsPending, a, anon, k, "approval"); n != 3 {
		t.Errorf("pending approvals %v, want 3", n)
	}

	clock.Add(30 * time.Second)
	decide(t, approve["reviewUrl"].(string), "submitted")
	clock.Add(60 * time.Second)
	decide(t, decline["reviewUrl"].(string), "declined")
	call(t, s, "elicit_cancel", map[string]any{"elicitationId": cancel["elicitationId"]})
	clock.Add(31 * time.Second) // past the fourth's expiry
	m.metrics.sweep(context.Background(), m.app)
	m.metrics.sweep(context.Background(), m.app) // a second sweep counts nothing again
	if n, err := (&metrics.Expiry{Service: m.Service}).Sweep(context.Background()); err != nil || n != 0 {
		t.Errorf("another process's sweep recorded %d (%v), want 0: each expiry is counted once", n, err)
	}

	after := scrape(t, m.MetricsURL)
	for _, c := range []struct {
		name, kind string
		want       float64
	}{
		{metrics.RequestsApproved, "approval", 1},
		{metrics.RequestsDeclined, "approval", 1},
		{metrics.RequestsCanceled, "selection", 1},
		{metrics.RequestsExpired, "approval", 1},
		{metrics.RequestsCanceled, "approval", 0},
		{metrics.RequestsExpired, "selection", 0},
		{metrics.TimeToDecision, "approval", 2},
		{metrics.RequestsPending, "approval", 0},
		{metrics.RequestsPending, "selection", 0},
	} {
		if d := value(after, c.name, a, anon, k, c.kind) - value(got, c.name, a, anon, k, c.kind); c.name != metrics.RequestsPending && d != c.want {
			t.Errorf("%s{kind=%s} moved by %v, want %v", c.name, c.kind, d, c.want)
		}
		if c.name == metrics.RequestsPending && value(after, c.name, a, anon, k, c.kind) != c.want {
			t.Errorf("%s{kind=%s} is %v, want %v", c.name, c.kind, value(after, c.name, a, anon, k, c.kind), c.want)
		}
	}
	h := after[metrics.TimeToDecision].GetMetric()[0].GetHistogram()
	if h.GetSampleSum() != 30+90 {
		t.Errorf("time to decision sums %v s, want 120 (30 s and 90 s)", h.GetSampleSum())
	}
	for _, b := range h.GetBucket() {
		if b.GetUpperBound() == 60 && b.GetCumulativeCount() != 1 {
			t.Errorf("bucket le=60 holds %d, want 1", b.GetCumulativeCount())
		}
	}
	if value(after, metrics.WaitsOpen) != 0 || after[metrics.WaitsOpen] == nil {
		t.Errorf("%s: %v, want 0 and present", metrics.WaitsOpen, after[metrics.WaitsOpen])
	}
	_ = expire
}

// decide opens the review page and submits decision.
func decide(t *testing.T, reviewURL, decision string) {
	t.Helper()
	token, _ := openReview(t, reviewURL)
	if code := submit(t, reviewURL, url.Values{"token": {token}, "decision": {decision}}); code != http.StatusOK && code != http.StatusSeeOther {
		t.Fatalf("submit %s: %d", decision, code)
	}
}
