package metrics

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	promclient "github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// Prometheus is the local server's encoding: OpenTelemetry instruments
// (the OpenTelemetry Go SDK) read by its Prometheus exporter into a
// registry of its own, served by Handler.
type Prometheus struct {
	*Counts
	provider *sdkmetric.MeterProvider
	registry *promclient.Registry
	meter    metric.Meter
}

// Gauges are what the gauges read when scraped.
type Gauges struct {
	// Pending lists the pending requests (the store's pending index, at
	// most elicitation.MaxInbox).
	Pending elicitation.Inbox
	// Now is the clock Pending is read at.
	Now func() time.Time
	// Open reads the waits open in this process.
	Open func() elicitation.Open
}

// NewPrometheus builds the meter provider, its Prometheus exporter and
// the instruments; maxPrincipals bounds the principal label (0: default).
func NewPrometheus(maxPrincipals int) (*Prometheus, error) {
	reg := promclient.NewRegistry()
	exp, err := prometheus.New(prometheus.WithRegisterer(reg), prometheus.WithoutScopeInfo(), prometheus.WithoutTargetInfo())
	if err != nil {
		return nil, fmt.Errorf("metrics: prometheus exporter: %w", err)
	}
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exp))
	p := &Prometheus{provider: provider, registry: reg, meter: provider.Meter("github.com/mcp-elicitation/elicitation")}
	s, err := newOtelSink(p.meter)
	if err != nil {
		return nil, err
	}
	p.Counts = newCounts(s, maxPrincipals)
	return p, nil
}

// Handler serves the metrics in Prometheus's text format.
func (p *Prometheus) Handler() http.Handler {
	return promhttp.HandlerFor(p.registry, promhttp.HandlerOpts{})
}

// Close stops the meter provider.
func (p *Prometheus) Close() error { return p.provider.Shutdown(context.Background()) }

// Watch registers the gauges, which read g at each scrape.
func (p *Prometheus) Watch(g Gauges) error {
	pending, err := p.meter.Int64ObservableGauge(otelName(RequestsPending), metric.WithDescription("requests pending now, by principal and kind"))
	if err != nil {
		return fmt.Errorf("metrics: %s: %w", RequestsPending, err)
	}
	waits, err := p.meter.Int64ObservableGauge(otelName(WaitsOpen), metric.WithDescription("waits open in this process"))
	if err != nil {
		return fmt.Errorf("metrics: %s: %w", WaitsOpen, err)
	}
	watches, err := p.meter.Int64ObservableGauge(otelName(WatchesOpen), metric.WithDescription("long watches open in this process (tasks' status notices, pushes)"))
	if err != nil {
		return fmt.Errorf("metrics: %s: %w", WatchesOpen, err)
	}
	_, err = p.meter.RegisterCallback(func(ctx context.Context, o metric.Observer) error {
		open := g.Open()
		o.ObserveInt64(waits, open.Waits)
		o.ObserveInt64(watches, open.Watches)
		counts, err := pendingCounts(ctx, g.Pending, g.Now(), p.principals)
		for k, n := range counts {
			o.ObserveInt64(pending, n, metric.WithAttributes(attribute.String(LabelPrincipal, k.Principal), attribute.String(LabelKind, string(k.Kind))))
		}
		return err
	}, pending, waits, watches)
	if err != nil {
		return fmt.Errorf("metrics: gauges: %w", err)
	}
	return nil
}

// Key is a principal (as labelled) and a kind.
type Key struct {
	Principal string
	Kind      elicitation.Kind
}

// pendingCounts counts the requests pending at now by principal label
// and kind, from the pending index (at most elicitation.MaxInbox).
func pendingCounts(ctx context.Context, in elicitation.Inbox, now time.Time, b *principals) (map[Key]int64, error) {
	es, err := in.PendingEntries(ctx, now, elicitation.MaxInbox)
	if err != nil {
		return nil, fmt.Errorf("metrics: pending: %w", err)
	}
	out := map[Key]int64{}
	for _, e := range es {
		out[Key{b.label(e.Owner), e.Kind}]++
	}
	return out, nil
}

// otelName is a Prometheus name's instrument name: the exporter adds the
// _total of counters and the _seconds of the unit back.
func otelName(name string) string {
	return strings.TrimSuffix(strings.TrimSuffix(name, "_total"), "_seconds")
}

// otelSink records into OpenTelemetry instruments, made on first use.
type otelSink struct {
	meter    metric.Meter
	counters map[string]metric.Int64Counter
	decision metric.Float64Histogram
}

func newOtelSink(m metric.Meter) (*otelSink, error) {
	h, err := m.Float64Histogram(otelName(TimeToDecision), metric.WithUnit("s"),
		metric.WithDescription("time from a request's creation to its approval or decline"),
		metric.WithExplicitBucketBoundaries(DecisionBuckets...))
	if err != nil {
		return nil, fmt.Errorf("metrics: %s: %w", TimeToDecision, err)
	}
	s := &otelSink{meter: m, counters: map[string]metric.Int64Counter{}, decision: h}
	for _, name := range []string{RequestsCreated, RequestsApproved, RequestsDeclined, RequestsExpired, RequestsCanceled, NotifySent, NotifyFailed} {
		if s.counters[name], err = m.Int64Counter(otelName(name)); err != nil {
			return nil, fmt.Errorf("metrics: %s: %w", name, err)
		}
	}
	return s, nil
}

func attrs(labels []Label) metric.MeasurementOption {
	kv := make([]attribute.KeyValue, len(labels))
	for i, l := range labels {
		kv[i] = attribute.String(l.Name, l.Value)
	}
	return metric.WithAttributes(kv...)
}

func (s *otelSink) count(name string, labels ...Label) {
	s.counters[name].Add(context.Background(), 1, attrs(labels))
}

func (s *otelSink) seconds(_ string, v float64, labels ...Label) {
	s.decision.Record(context.Background(), v, attrs(labels))
}
