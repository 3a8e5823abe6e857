package gate

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/compose"
	"github.com/mcp-elicitation/elicitation/internal/compose/embeddedstore"
	"github.com/mcp-elicitation/elicitation/internal/compose/mcpendpoint"
	"github.com/mcp-elicitation/elicitation/internal/proxy/config"
)

// Embedded is an elicitation service inside the proxy process
// (elicitation_service.embedded), composed as the local server composes
// it (internal/compose): the embedded store, the review page and the MCP
// tools. Its review pages are served on the configured address; its MCP
// endpoint on a loopback port of its own, for the gate alone, so that the
// review address never exposes the tools.
type Embedded struct {
	App *compose.App
	// MCPURL is the loopback MCP endpoint the gate talks to; ReviewBase
	// the base of review URLs.
	MCPURL, ReviewBase string

	servers []*http.Server
	tmp     string
	// stop ends the cleanup loop; done is closed when it has.
	stop, done chan struct{}
}

// EmbeddedOptions configures StartEmbedded.
type EmbeddedOptions struct {
	Config *config.EmbeddedService
	// Logger receives the service's logs, and each new review URL (it
	// carries the reviewer's key; the proxy's own terminal is where its
	// user reads it, as with the local server).
	Logger  *slog.Logger
	Version string
	// OnCreated, if set, is also told of each new review request.
	OnCreated func(ctx context.Context, id, reviewURL string)
}

// StartEmbedded starts the embedded service.
func StartEmbedded(ctx context.Context, o EmbeddedOptions) (*Embedded, error) {
	e, log, version := o.Config, o.Logger, o.Version
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := compose.Defaults()
	s.Store = "bolt"
	s.Version = version
	emb := &Embedded{}
	s.DataDir = e.DataDir
	if s.DataDir == "" {
		dir, err := os.MkdirTemp("", "mcp-elicitation-proxy-")
		if err != nil {
			return nil, fmt.Errorf("embedded elicitation service: %w", err)
		}
		emb.tmp, s.DataDir = dir, dir
	}
	reviewLn, err := net.Listen("tcp", e.Listen)
	if err != nil {
		emb.Close()
		return nil, fmt.Errorf("embedded elicitation service: listen on %s: %w", e.Listen, err)
	}
	mcpLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		_ = reviewLn.Close()
		emb.Close()
		return nil, fmt.Errorf("embedded elicitation service: %w", err)
	}
	emb.ReviewBase = strings.TrimRight(e.PublicURL, "/")
	if emb.ReviewBase == "" {
		emb.ReviewBase = "http://" + reviewLn.Addr().String()
	}
	s.PublicURL = emb.ReviewBase
	app, err := compose.Build(ctx, s, compose.Parts{
		Store: embeddedstore.Open,
		Pages: compose.Pages,
		MCP:   mcpendpoint.Part(embeddedstore.APIKeys),
		// The service's own sessions with the gate are not the proxy
		// user's business: its warnings and errors only.
		Log: slog.New(minLevel{log.Handler(), slog.LevelWarn}),
		OnCreated: func(ctx context.Context, id, url string) {
			log.Info("review requested: open the review page", "elicitation_id", id, "url", url)
			if o.OnCreated != nil {
				o.OnCreated(ctx, id, url)
			}
		},
	})
	if err != nil {
		_ = reviewLn.Close()
		_ = mcpLn.Close()
		emb.Close()
		return nil, fmt.Errorf("embedded elicitation service: %w", err)
	}
	emb.App = app
	pages := http.NewServeMux()
	app.Pages.Routes(pages)
	tools := http.NewServeMux()
	tools.Handle("/mcp", app.MCP)
	emb.MCPURL = "http://" + mcpLn.Addr().String() + "/mcp"
	emb.serve(reviewLn, pages, log)
	emb.serve(mcpLn, tools, log)
	if every := s.CleanupInterval; every > 0 {
		emb.stop = make(chan struct{})
		emb.done = make(chan struct{})
		go emb.cleanupLoop(every, log)
	}
	return emb, nil
}

// cleanupLoop removes requests past their retention, as the local server
// does, until Close.
func (e *Embedded) cleanupLoop(every time.Duration, log *slog.Logger) {
	defer close(e.done)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		if n, err := e.App.Store.Cleanup(ctx, e.App.Now()); err != nil {
			log.Error("embedded elicitation service: cleanup failed", "error", err)
		} else if n > 0 {
			log.Info("embedded elicitation service: removed requests past their retention", "count", n)
		}
		cancel()
		select {
		case <-t.C:
		case <-e.stop:
			return
		}
	}
}

func (e *Embedded) serve(ln net.Listener, h http.Handler, log *slog.Logger) {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	e.servers = append(e.servers, srv)
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("embedded elicitation service stopped", "addr", ln.Addr().String(), "error", err)
		}
	}()
}

// Close stops the listeners and closes the store; a temporary data
// directory is removed.
func (e *Embedded) Close() error {
	var errs []error
	if e.stop != nil {
		close(e.stop)
		<-e.done
		e.stop = nil
	}
	for _, s := range e.servers {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		if err := s.Shutdown(ctx); err != nil {
			_ = s.Close()
		}
		cancel()
	}
	if e.App != nil {
		errs = append(errs, e.App.Close())
	}
	if e.tmp != "" {
		errs = append(errs, os.RemoveAll(e.tmp))
	}
	return errors.Join(errs...)
}

// minLevel drops records below min.
type minLevel struct {
	slog.Handler
	min slog.Level
}

func (h minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l)
}

func (h minLevel) WithAttrs(as []slog.Attr) slog.Handler {
	return minLevel{h.Handler.WithAttrs(as), h.min}
}

func (h minLevel) WithGroup(name string) slog.Handler {
	return minLevel{h.Handler.WithGroup(name), h.min}
}
