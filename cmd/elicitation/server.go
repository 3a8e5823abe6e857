package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/compose"
	"github.com/mcp-elicitation/elicitation/internal/compose/localstore"
	"github.com/mcp-elicitation/elicitation/internal/compose/mcpendpoint"
	"github.com/mcp-elicitation/elicitation/internal/compose/notifypart"
	"github.com/mcp-elicitation/elicitation/internal/compose/signin"
	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/notify"
	"github.com/mcp-elicitation/elicitation/internal/notify/sesmail"
)

// Main is a running local server. Start it, then Close it; tests start it
// on port 0 with a temporary data directory.
type Main struct {
	Config  Config
	Service *elicitation.Service
	Log     *slog.Logger

	// MCPURL is the MCP endpoint; ReviewBase the base of review URLs.
	MCPURL, ReviewBase string

	app *compose.App
	// base is the context of every request; Close cancels it after a
	// grace period so that open event streams and long waits end.
	base       context.Context
	cancelBase context.CancelFunc
	servers    []*http.Server
	failed     chan error // a listener that stopped on its own
	// notifying is closed when the notification worker has stopped.
	notifying chan struct{}
}

// Start opens the store, builds the handlers and starts listening.
func Start(ctx context.Context, cfg Config, logw io.Writer, opts ...Option) (*Main, error) {
	m := &Main{Config: cfg, failed: make(chan error, 2)}
	m.base, m.cancelBase = context.WithCancel(context.Background())
	o := options{now: time.Now}
	for _, f := range opts {
		f(&o)
	}
	m.Log = cfg.Logger(logw, false)
	if err := m.open(ctx, o); err != nil {
		_ = m.Close()
		return nil, err
	}
	return m, nil
}

// Option adjusts Start (for tests).
type Option func(*options)

type options struct{ now func() time.Time }

// WithClock replaces the service's clock.
func WithClock(now func() time.Time) Option { return func(o *options) { o.now = now } }

func (m *Main) open(ctx context.Context, o options) error {
	cfg := m.Config
	mcpLn, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.Addr, err)
	}
	reviewLn := mcpLn
	if cfg.ReviewAddr != "" {
		if reviewLn, err = net.Listen("tcp", cfg.ReviewAddr); err != nil {
			_ = mcpLn.Close()
			return fmt.Errorf("listen on %s: %w", cfg.ReviewAddr, err)
		}
	}
	closeListeners := func() {
		_ = mcpLn.Close()
		if reviewLn != mcpLn {
			_ = reviewLn.Close()
		}
	}
	m.MCPURL = "http://" + mcpLn.Addr().String() + "/mcp"
	m.ReviewBase = strings.TrimSuffix(cfg.PublicURL, "/")
	if m.ReviewBase == "" {
		m.ReviewBase = "http://" + reviewLn.Addr().String()
	}
	// Review URLs name the address this server announces.
	cfg.PublicURL = m.ReviewBase
	if cfg.Store != "dynamodb" {
		if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
			closeListeners()
			return fmt.Errorf("data directory: %w", err)
		}
	}
	m.app, err = compose.Build(ctx, cfg, compose.Parts{
		Store:  localstore.Open,
		Pages:  compose.Pages,
		MCP:    mcpendpoint.Part(localstore.APIKeys),
		Notify: notifypart.Part(os.LookupEnv, sesmail.FromAWS),
		Log:    m.Log,
		Now:    o.now,
		OnCreated: func(_ context.Context, id, url string) {
			// The local user needs the URL to open it; it carries the
			// reviewer's key, so it goes to this terminal only.
			m.Log.Info("elicitation created: open the review page", "id", id, "url", url)
		},
	})
	if err != nil {
		closeListeners()
		return err
	}
	m.Service = m.app.Service
	if !cfg.RequireAPIKey {
		if ip := mcpLn.Addr().(*net.TCPAddr).IP; !ip.IsLoopback() {
			m.Log.Warn("the MCP endpoint is reachable beyond this machine without API keys; consider --require-api-key", "addr", mcpLn.Addr().String())
		}
	}

	mcpMux := http.NewServeMux()
	mcpMux.Handle("/mcp", m.app.MCP)
	mcpMux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok\n") })
	reviewMux := mcpMux
	if reviewLn != mcpLn {
		reviewMux = http.NewServeMux()
		reviewMux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok\n") })
	}
	signIn, err := signin.Middleware(m.app, nil)
	if err != nil {
		closeListeners()
		_ = m.app.Close()
		return err
	}
	pages := http.NewServeMux()
	m.app.Pages.Routes(pages)
	reviewMux.Handle("/review/", signIn(pages))

	if cfg.CleanupInterval > 0 {
		go m.cleanupLoop(cfg.CleanupInterval, o.now)
	}
	m.startNotifying()
	m.serve(mcpLn, mcpMux)
	if reviewLn != mcpLn {
		m.serve(reviewLn, reviewMux)
	}
	return nil
}

func (m *Main) serve(ln net.Listener, h http.Handler) {
	srv := compose.HTTPServer(m.Config, h, m.base, slog.NewLogLogger(m.Log.Handler(), slog.LevelWarn))
	m.servers = append(m.servers, srv)
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			m.Log.Error("server stopped", "addr", ln.Addr().String(), "err", err)
			m.failed <- fmt.Errorf("serve on %s: %w", ln.Addr(), err)
		}
	}()
}

// cleanupLoop removes requests past their retention now and then every
// interval, until Close.
func (m *Main) cleanupLoop(every time.Duration, now func() time.Time) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		ctx, cancel := context.WithTimeout(m.base, time.Minute)
		n, err := m.app.Store.Cleanup(ctx, now())
		cancel()
		switch {
		case err != nil && m.base.Err() == nil:
			m.Log.Error("cleanup failed", "err", err)
		case n > 0:
			m.Log.Info("removed requests past their retention", "count", n)
		}
		select {
		case <-t.C:
		case <-m.base.Done():
			return
		}
	}
}

// startNotifying runs the notification deliverer in this process when
// targets are configured: it resumes what the outbox holds (a previous
// run's undelivered notices), wakes when a request writes notices, and
// sweeps every NotifyInterval for expiry notices and retries.
func (m *Main) startNotifying() {
	d := notifypart.Deliverer(m.app)
	if d == nil {
		return
	}
	w := notify.NewWorker(d, m.Config.NotifyInterval)
	d.Targets.OnQueued(w.Wake)
	m.notifying = make(chan struct{})
	go func() {
		defer close(m.notifying)
		_ = w.Run(m.base)
	}()
	m.Log.Info("notifications on", "targets", strings.Join(d.Targets.Names(), ", "))
}

// Failed reports a listener that stopped serving on its own; the server
// should then be closed.
func (m *Main) Failed() <-chan error { return m.failed }

// ShutdownGrace is how long Close lets requests in flight finish before it
// ends the ones still open (event streams, waits).
const ShutdownGrace = 3 * time.Second

// Close stops accepting connections, lets requests in flight finish for
// ShutdownGrace, then ends the rest (a waiting agent's call returns and
// it calls again once the server is back) and closes the store.
func (m *Main) Close() error {
	var errs []error
	grace, cancel := context.WithTimeout(context.Background(), ShutdownGrace)
	defer cancel()
	for _, s := range m.servers {
		if err := s.Shutdown(grace); err != nil && !errors.Is(err, context.DeadlineExceeded) {
			errs = append(errs, fmt.Errorf("shut down: %w", err))
		}
	}
	m.cancelBase()
	for _, s := range m.servers {
		if err := s.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close: %w", err))
		}
	}
	if m.notifying != nil {
		<-m.notifying // before the store closes
	}
	if m.app != nil {
		if err := m.app.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// openStore opens the store of c (the operator commands).
func openStore(ctx context.Context, c Config) (elicitation.Store, error) {
	return localstore.Open(ctx, c)
}
