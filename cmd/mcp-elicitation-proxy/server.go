package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/compose"
	"github.com/mcp-elicitation/elicitation/internal/compose/mcpendpoint"
	"github.com/mcp-elicitation/elicitation/internal/localserver"
	"github.com/mcp-elicitation/elicitation/internal/proxy"
	"github.com/mcp-elicitation/elicitation/internal/proxy/config"
	"github.com/mcp-elicitation/elicitation/internal/proxy/gate"
	"github.com/mcp-elicitation/elicitation/internal/proxy/plan"
)

// Options are what Start needs: a loaded configuration and what the
// command line and the environment say beyond it.
type Options struct {
	Config *config.Config
	// HTTP is the address to serve MCP over streamable HTTP on; empty:
	// stdio (Run serves the process's stdin and stdout).
	HTTP string
	// Limits are the HTTP listener's limits, the local server's settings
	// of the same names (--mcp-max-sessions, --mcp-session-idle,
	// --http-read-timeout, --http-write-timeout, --http-idle-timeout,
	// --max-body).
	Limits compose.Settings
	Log    *slog.Logger
	// Sealer signs multi round-trip request state; nil: a key random to
	// the process.
	Sealer *plan.Sealer
	// APIKey is the bearer key of elicitation_service.url; SignInSecret
	// the embedded service's OpenID client secret.
	APIKey, SignInSecret string
	// UpstreamStderr receives a stdio upstream's standard error.
	UpstreamStderr io.Writer
	Version        string
	// StartTimeout bounds connecting to the upstream and reading its
	// tools; 0: DefaultStartTimeout. An upstream not reachable by then
	// does not stop the proxy (it connects on demand).
	StartTimeout time.Duration
}

// DefaultStartTimeout is Options.StartTimeout's default.
const DefaultStartTimeout = 60 * time.Second

// Main is a running proxy: the upstream connection, the human gate when
// the configuration sets one, and in HTTP mode the listener, on the local
// server's lifecycle (internal/localserver) with its limits. Start it,
// Run it, then Close it; tests start it on port 0.
type Main struct {
	Options
	Proxy *proxy.Proxy
	// URL is the MCP endpoint in HTTP mode.
	URL string

	gate io.Closer
	srv  *localserver.Server
}

// Start connects to the upstream, opens the gate and, in HTTP mode,
// starts listening. On error it closes what it opened.
func Start(ctx context.Context, o Options) (*Main, error) {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.StartTimeout <= 0 {
		o.StartTimeout = DefaultStartTimeout
	}
	m := &Main{Options: o}
	if err := m.start(ctx); err != nil {
		_ = m.Close()
		return nil, err
	}
	return m, nil
}

func (m *Main) start(ctx context.Context) error {
	o := m.Options
	idle, _, maxBody := o.Limits.MCPLimits()
	startCtx, cancel := context.WithTimeout(ctx, o.StartTimeout)
	p, err := proxy.New(startCtx, proxy.Options{
		Config:         o.Config,
		Version:        o.Version,
		Logger:         o.Log,
		Sealer:         o.Sealer,
		UpstreamStderr: o.UpstreamStderr,
		SessionIdle:    idle,
		MaxBodyBytes:   maxBody,
		SessionCap:     mcpendpoint.SessionCap(o.Limits),
	})
	cancel()
	if err != nil {
		return fmt.Errorf("starting the proxy failed: %w", err)
	}
	m.Proxy = p
	// The human gate (docs/gate.md), when the configuration sets its keys.
	g, gateCloser, err := gate.Open(ctx, o.Config, gate.OpenOptions{APIKey: o.APIKey, SignInSecret: o.SignInSecret, Logger: o.Log, Version: o.Version, Upstream: p.CallUpstream, Sealer: o.Sealer})
	if err != nil {
		return fmt.Errorf("starting the human gate failed: %w", err)
	}
	m.gate = gateCloser
	if g != nil {
		g.Install(p.Planner())
	}
	if o.HTTP == "" {
		return nil
	}
	ln, err := localserver.Listen(o.HTTP)
	if err != nil {
		return err
	}
	m.URL = "http://" + ln.Addr().String()
	m.srv = localserver.New(localserver.Options{Settings: o.Limits, Log: o.Log})
	m.srv.Serve(ln, p.HTTPHandler())
	o.Log.Info("serving MCP over streamable HTTP", "address", m.URL)
	return nil
}

// Run serves until ctx is done: on stdio until the client disconnects
// too, over HTTP until the listener fails.
func (m *Main) Run(ctx context.Context) error {
	if m.srv != nil {
		select {
		case <-ctx.Done():
			return nil
		case err := <-m.srv.Failed():
			return err
		}
	}
	m.Log.Info("serving MCP on stdio", "upstream", describe(m.Config))
	// Not Server.Run, which logs a signal's cancellation as an error.
	ss, err := m.Proxy.Server().Connect(ctx, m.Proxy.WrapTransport(stdioTransport()), nil)
	if err != nil {
		return fmt.Errorf("starting the stdio session failed: %w", err)
	}
	stop := context.AfterFunc(ctx, func() { _ = ss.Close() })
	defer stop()
	if err := ss.Wait(); err != nil && ctx.Err() == nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("stdio session ended with an error: %w", err)
	}
	return nil
}

// Close stops the listener (requests in flight get the lifecycle's grace
// period), the gate and its embedded service, and the upstream (a stdio
// upstream's process group is terminated).
func (m *Main) Close() error {
	var errs []error
	if m.srv != nil {
		errs = append(errs, m.srv.Close())
	}
	if m.gate != nil {
		errs = append(errs, m.gate.Close())
	}
	if m.Proxy != nil {
		if err := m.Proxy.Close(); err != nil {
			errs = append(errs, fmt.Errorf("closing the upstream failed: %w", err))
		}
	}
	return errors.Join(errs...)
}
