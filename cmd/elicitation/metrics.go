package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/compose"
	"github.com/mcp-elicitation/elicitation/internal/localserver"
	"github.com/mcp-elicitation/elicitation/internal/metrics"
)

// expirySweep is how often the local server notices expired requests for
// the metrics (and before each cleanup pass, which removes them from the
// pending index).
const expirySweep = 30 * time.Second

// localMetrics is the local server's metrics: the OpenTelemetry
// instruments with their Prometheus exporter, served on a listener of
// their own (--metrics-addr), and the expiry sweep that counts expiries.
type localMetrics struct {
	prom   *metrics.Prometheus
	ln     net.Listener
	expiry *metrics.Expiry
}

// openMetrics listens on --metrics-addr and builds the instruments; nil
// without the setting.
func openMetrics(cfg Config) (*localMetrics, error) {
	if cfg.MetricsAddr == "" {
		return nil, nil
	}
	ln, err := localserver.Listen(cfg.MetricsAddr)
	if err != nil {
		return nil, err
	}
	prom, err := metrics.NewPrometheus(cfg.MetricsPrincipals)
	if err != nil {
		_ = ln.Close()
		return nil, err
	}
	return &localMetrics{prom: prom, ln: ln}, nil
}

// counts is what Parts.Metrics gets: nil without metrics.
func (lm *localMetrics) counts() *metrics.Counts {
	if lm == nil {
		return nil
	}
	return lm.prom.Counts
}

// close closes what openMetrics opened, when the server does not start.
func (lm *localMetrics) close() {
	if lm != nil {
		_ = lm.ln.Close()
		_ = lm.prom.Close()
	}
}

// serve registers the gauges over app, serves /metrics and runs the
// expiry sweep; it returns the metrics URL.
func (lm *localMetrics) serve(app *compose.App, srv *localserver.Server) (string, error) {
	if err := lm.prom.Watch(metrics.Gauges{Pending: app.Store, Now: app.Now, Open: app.Service.Open}); err != nil {
		return "", err
	}
	lm.expiry = &metrics.Expiry{Service: app.Service}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", lm.prom.Handler())
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok\n") })
	srv.Serve(lm.ln, mux)
	srv.Go(func(ctx context.Context) {
		defer func() { _ = lm.prom.Close() }()
		t := time.NewTicker(expirySweep)
		defer t.Stop()
		for {
			lm.sweep(ctx, app)
			select {
			case <-t.C:
			case <-ctx.Done():
				return
			}
		}
	})
	return "http://" + lm.ln.Addr().String() + "/metrics", nil
}

// serveMetrics serves lm's metrics, if any (--metrics-addr).
func (m *Main) serveMetrics(lm *localMetrics) error {
	if lm == nil {
		return nil
	}
	url, err := lm.serve(m.app, m.srv)
	if err != nil {
		return err
	}
	m.MetricsURL, m.metrics = url, lm
	return nil
}

// sweep notices the requests expired since the last sweep.
func (lm *localMetrics) sweep(ctx context.Context, app *compose.App) {
	pass, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if _, err := lm.expiry.Sweep(pass); err != nil && ctx.Err() == nil {
		app.Log.Error("expiry sweep failed", "err", err)
	}
}

// cleaner is the store the cleanup loop cleans, sweeping for expiries
// first when metrics are on (a cleanup removes expired requests from the
// pending index the sweep reads).
func (lm *localMetrics) cleaner(app *compose.App) localserver.Cleaner {
	if lm == nil {
		return app.Store
	}
	return sweepFirst{lm: lm, app: app}
}

type sweepFirst struct {
	lm  *localMetrics
	app *compose.App
}

func (s sweepFirst) Cleanup(ctx context.Context, now time.Time) (int, error) {
	s.lm.sweep(ctx, s.app)
	return s.app.Store.Cleanup(ctx, now)
}
