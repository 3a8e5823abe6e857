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

	"github.com/mcp-elicitation/elicitation/internal/accesstoken"
	"github.com/mcp-elicitation/elicitation/internal/authserver"
	"github.com/mcp-elicitation/elicitation/internal/clientreg"
	"github.com/mcp-elicitation/elicitation/internal/compose"
	"github.com/mcp-elicitation/elicitation/internal/compose/mcpendpoint"
	"github.com/mcp-elicitation/elicitation/internal/compose/notifypart"
	"github.com/mcp-elicitation/elicitation/internal/compose/oauthpart"
	"github.com/mcp-elicitation/elicitation/internal/compose/signin"
	"github.com/mcp-elicitation/elicitation/internal/compose/slackpart"
	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/localserver"
	"github.com/mcp-elicitation/elicitation/internal/notify"
	"github.com/mcp-elicitation/elicitation/internal/signing"
)

// Main is a running local server. Start it, then Close it; tests start it
// on port 0 with a temporary data directory.
type Main struct {
	Config  Config
	Service *elicitation.Service
	Log     *slog.Logger

	// MCPURL is the MCP endpoint; ReviewBase the base of review URLs;
	// MetricsURL the Prometheus endpoint (empty without --metrics-addr).
	MCPURL, ReviewBase, MetricsURL string

	app *compose.App
	// srv is the lifecycle: the listeners with their limits, the cleanup
	// loop and the notification worker, and their closing.
	srv *localserver.Server
	// metrics are --metrics-addr's (nil: none).
	metrics *localMetrics
}

// Start opens the store, builds the handlers and starts listening.
func Start(ctx context.Context, cfg Config, logw io.Writer, opts ...Option) (*Main, error) {
	m := &Main{Config: cfg}
	o := options{now: time.Now}
	for _, f := range opts {
		f(&o)
	}
	m.Log = cfg.Logger(logw, false)
	m.srv = localserver.New(localserver.Options{Settings: cfg, Log: m.Log, Grace: ShutdownGrace})
	if err := m.open(ctx, o); err != nil {
		_ = m.Close()
		return nil, err
	}
	return m, nil
}

// Option adjusts Start (for tests: WithClock, in clock_test.go).
type Option func(*options)

type options struct {
	now func() time.Time
	// documents lets tests fetch client ID metadata documents from
	// loopback.
	documents clientreg.DocumentOptions
}

func (m *Main) open(ctx context.Context, o options) error {
	cfg := m.Config
	mcpLn, err := localserver.Listen(cfg.Addr)
	if err != nil {
		return err
	}
	reviewLn := mcpLn
	if cfg.ReviewAddr != "" {
		if reviewLn, err = localserver.Listen(cfg.ReviewAddr); err != nil {
			_ = mcpLn.Close()
			return err
		}
	}
	lm, err := openMetrics(cfg)
	if err != nil {
		_ = mcpLn.Close()
		if reviewLn != mcpLn {
			_ = reviewLn.Close()
		}
		return err
	}
	closeListeners := func() {
		_ = mcpLn.Close()
		if reviewLn != mcpLn {
			_ = reviewLn.Close()
		}
		lm.close()
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
	resource := m.ReviewBase + "/mcp"
	if reviewLn != mcpLn {
		resource = m.MCPURL
	}
	oauth := oauthpart.Once(oauthpart.Options{
		Grants:    openGrants(o.now),
		Resource:  func(*http.Request) string { return resource },
		Documents: o.documents,
	})
	m.app, err = compose.Build(ctx, cfg, compose.Parts{
		Store: openStore,
		Pages: compose.Pages,
		MCP: mcpendpoint.Part(openAPIKeys, func(ctx context.Context, a *compose.App) (accesstoken.Verifier, error) {
			s, err := oauth(ctx, a)
			if err != nil {
				return nil, err
			}
			return s.Server, nil
		}),
		Notify:  notifypart.Part(os.LookupEnv, sesFromAWS),
		Log:     m.Log,
		Now:     o.now,
		Metrics: lm.counts(),
		OnCreated: func(_ context.Context, id, url string) {
			// The local user needs the URL to open it; it carries the
			// reviewer's key, so it goes to this terminal only.
			m.Log.Info("elicitation created: open the review page", "elicitationId", id, "url", url)
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
	if err := m.routes(ctx, mcpMux, reviewMux, oauth, resource); err != nil {
		closeListeners()
		_ = m.app.Close()
		return err
	}

	if err := m.serveMetrics(lm); err != nil {
		closeListeners()
		_ = m.app.Close()
		return err
	}
	if cfg.CleanupInterval > 0 {
		m.srv.Cleanup(lm.cleaner(m.app), cfg.CleanupInterval, o.now)
	}
	m.startNotifying()
	m.srv.Serve(mcpLn, mcpMux)
	if reviewLn != mcpLn {
		m.srv.Serve(reviewLn, reviewMux)
	}
	return nil
}

// routes puts the review listener's routes on reviewMux (the pages behind
// sign-in, the deployment's key set, the authorization server with OAuth
// on, Slack's interactions)
// and, with OAuth on, the protected resource's metadata on mcpMux.
func (m *Main) routes(ctx context.Context, mcpMux, reviewMux *http.ServeMux, oauth func(context.Context, *compose.App) (*oauthpart.Server, error), resource string) error {
	signIn, err := signin.Middleware(m.app, nil)
	if err != nil {
		return err
	}
	pages := http.NewServeMux()
	m.app.Pages.Routes(pages)
	reviewMux.Handle("/review/", signIn(pages))
	// The one signing keyring's public keys, with or without OAuth: what
	// verifies receipts and, with OAuth, access tokens.
	keys, err := m.app.SigningKeys(ctx)
	if err != nil {
		return err
	}
	reviewMux.Handle("GET "+signing.JWKSPath, signing.Handler(keys))
	if m.Config.OAuthOn() {
		as, err := oauth(ctx, m.app)
		if err != nil {
			return err
		}
		as.Routes(reviewMux, signIn)
		prm := as.ResourceMetadata()
		mcpMux.Handle(authserver.ResourceMetadataPath, prm)
		mcpMux.Handle(authserver.ResourceMetadataPath+authserver.ResourcePath, prm)
		m.Log.Info("OAuth on: hosts connect with the URL of /mcp alone, people sign in with the reviewers' issuer", "mcp", resource, "issuer", m.ReviewBase)
	}
	slack, err := slackpart.Handler(ctx, m.app)
	if err != nil {
		return err
	}
	if slack != nil {
		// Slack signs its requests; no sign-in in front.
		reviewMux.Handle("POST "+slackpart.Path, slack)
		m.Log.Info("decisions from Slack on: set the Slack app's interactivity request URL", "url", m.ReviewBase+slackpart.Path)
	}
	return nil
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
	m.srv.Go(func(ctx context.Context) { _ = w.Run(ctx) })
	m.Log.Info("notifications on", "targets", strings.Join(d.Targets.Names(), ", "))
}

// Failed reports a listener that stopped serving on its own; the server
// should then be closed.
func (m *Main) Failed() <-chan error { return m.srv.Failed() }

// ShutdownGrace is how long Close lets requests in flight finish before it
// ends the ones still open (event streams, waits).
const ShutdownGrace = localserver.DefaultGrace

// Close stops accepting connections, lets requests in flight finish for
// ShutdownGrace, then ends the rest (a waiting agent's call returns and
// it calls again once the server is back), waits for the cleanup loop and
// the notification worker, and closes the store.
func (m *Main) Close() error {
	var errs []error
	if err := m.srv.Close(); err != nil {
		errs = append(errs, err)
	}
	if m.app != nil {
		if err := m.app.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
