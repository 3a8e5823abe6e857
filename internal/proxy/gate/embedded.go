package gate

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/attest"
	"github.com/mcp-elicitation/elicitation/internal/compose"
	"github.com/mcp-elicitation/elicitation/internal/compose/embeddedstore"
	"github.com/mcp-elicitation/elicitation/internal/compose/signin"
	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/localserver"
	"github.com/mcp-elicitation/elicitation/internal/proxy/config"
	"github.com/mcp-elicitation/elicitation/internal/signing"
)

// Embedded is an elicitation service inside the proxy process
// (elicitation_service.embedded), composed as the local server composes
// it (internal/compose): the embedded store and the review page, run on
// the local server's lifecycle (internal/localserver: the same body, read,
// write and idle limits, the same cleanup loop and closing). Its review
// pages are served on the configured address; the gate calls the service
// in process (Service), so no MCP endpoint is served at all. The same
// listener publishes the key set (signing.JWKSPath) that verifies the
// receipts of its decisions, whose issuer is ReviewBase.
type Embedded struct {
	App *compose.App
	// ReviewBase is the base of review URLs.
	ReviewBase string
	receipts   attest.Issuer

	srv *localserver.Server
	tmp string
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
	// Settings are what the service starts from: its listener and
	// session limits (as the local server's flags set them); nil:
	// compose.Defaults(). The store, data directory, public URL and
	// version are the embedded service's own.
	Settings *compose.Settings
	// SignInSecret is the OpenID client secret when Config.SignIn is set.
	SignInSecret string
}

// StartEmbedded starts the embedded service.
func StartEmbedded(ctx context.Context, o EmbeddedOptions) (_ *Embedded, err error) {
	e, log, version := o.Config, o.Logger, o.Version
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := compose.Defaults()
	if o.Settings != nil {
		s = *o.Settings
	}
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
	reviewLn, err := localserver.Listen(e.Listen)
	if err != nil {
		emb.Close()
		return nil, fmt.Errorf("embedded elicitation service: the review pages' address (elicitation_service.embedded.listen, or the proxy's --review-addr): %w", err)
	}
	defer func() {
		if err != nil {
			_ = reviewLn.Close()
			emb.Close() // closes the app too, once built
			err = fmt.Errorf("embedded elicitation service: %w", err)
		}
	}()
	emb.ReviewBase = strings.TrimRight(e.PublicURL, "/")
	if emb.ReviewBase == "" {
		emb.ReviewBase = "http://" + reviewLn.Addr().String()
	}
	s.PublicURL = emb.ReviewBase
	if si := e.SignIn; si != nil {
		s.OIDCIssuer, s.OIDCClientID, s.OIDCClientSecret, s.OIDCGroupsClaim = si.Issuer, si.ClientID, o.SignInSecret, si.GroupsClaim
	}
	app, err := compose.Build(ctx, s, compose.Parts{
		Store: embeddedstore.Open,
		Pages: compose.Pages,
		// The service's own work for the gate is not the proxy user's
		// business: its warnings and errors only.
		Log: slog.New(minLevel{log.Handler(), slog.LevelWarn}),
		OnCreated: func(ctx context.Context, id, url string) {
			log.Info("review requested: open the review page", "elicitationId", id, "url", url)
			if o.OnCreated != nil {
				o.OnCreated(ctx, id, url)
			}
		},
	})
	if err != nil {
		return nil, err
	}
	emb.App = app
	signIn, err := signin.Middleware(app, nil)
	if err != nil {
		return nil, err
	}
	keys, err := app.SigningKeys(ctx)
	if err != nil {
		return nil, err
	}
	emb.receipts = attest.Issuer{Keys: keys, Now: app.Now}
	routes := http.NewServeMux()
	app.Pages.Routes(routes)
	routes.Handle("GET "+signing.JWKSPath, signing.Handler(keys))
	emb.srv = localserver.New(localserver.Options{Settings: s, Log: log.With("part", "embedded elicitation service"), Grace: embeddedGrace})
	emb.srv.Serve(reviewLn, signIn(routes))
	if every := s.CleanupInterval; every > 0 {
		emb.srv.Cleanup(app.Store, every, app.Now)
	}
	return emb, nil
}

// Service is the embedded service as the gate calls it, in process; client
// names the proxy in each request.
func (e *Embedded) Service(client elicitation.Client) Service {
	return &localService{app: e.App, client: client, issuer: e.ReviewBase, receipts: e.receipts}
}

// embeddedGrace is how long Close lets the embedded service's requests in
// flight finish: the proxy is closing, and its gate's own calls with it.
const embeddedGrace = time.Second

// Close stops the listeners and the cleanup loop and closes the store; a
// temporary data directory is removed.
func (e *Embedded) Close() error {
	var errs []error
	if e.srv != nil {
		errs = append(errs, e.srv.Close())
		e.srv = nil
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
