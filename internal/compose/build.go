package compose

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/metrics"
	"github.com/mcp-elicitation/elicitation/internal/pagetoken"
	"github.com/mcp-elicitation/elicitation/internal/review"
	"github.com/mcp-elicitation/elicitation/internal/sealer"
	"github.com/mcp-elicitation/elicitation/internal/signing"
)

// Parts are what a deployment brings to Build: how it opens its store and
// reads secrets, and which handlers it serves. A binary links only the
// parts it names.
type Parts struct {
	// Store opens the store the settings name; required. Locally
	// cmd/elicitation's openStore (bolt or DynamoDB); on Lambda
	// lambdaconfig's DynamoDB store.
	Store func(ctx context.Context, s Settings) (elicitation.Store, error)

	// Secret reads a secret's text by ARN (Secrets Manager on Lambda),
	// for Settings.TokenSecretARN; nil: such settings are refused.
	Secret func(ctx context.Context, arn string) (string, error)

	// Pages builds the review page and the submission endpoint and their
	// page-token keys (Pages, the function); nil: none. A function rather
	// than a bool so that the MCP function does not link the page
	// renderer.
	Pages func(ctx context.Context, a *App) (*review.Handler, error)

	// MCP builds the MCP endpoint (compose/mcpendpoint.Part); nil: none.
	MCP func(ctx context.Context, a *App) (http.Handler, error)

	// Notify builds the notification targets the service writes
	// deliveries for (compose/notifypart.Part); nil, or a nil result: no
	// targets (a request naming one is refused).
	Notify func(ctx context.Context, a *App, secret func(context.Context, string) (string, error)) (elicitation.Notifications, error)

	// Log receives every part's logs; default: Settings.Logger on stderr.
	Log *slog.Logger

	// Now replaces the clock (tests); default time.Now.
	Now func() time.Time

	// OnCreated, if set, is called with each new request's id and review
	// URL (the local server prints it for its user; it carries the
	// reviewer's key, so nowhere more public than that).
	OnCreated func(ctx context.Context, id, reviewURL string)

	// Metrics counts what the service and its deliverer do
	// (internal/metrics: the local server's Prometheus encoding, the
	// functions' EMF lines, EMF); nil: nothing is counted.
	Metrics *metrics.Counts
}

// App is a composed service: its parts, built once, shared by its handlers.
type App struct {
	Settings  Settings
	Log       *slog.Logger
	Now       func() time.Time
	Store     elicitation.Store
	Service   *elicitation.Service
	Templates *review.TemplateChecker
	// Keys sign and check page tokens; set by Pages.
	Keys *pagetoken.Keyring
	// Pages serves the review page and the submissions; nil unless
	// Parts.Pages.
	Pages *review.Handler
	// MCP serves /mcp; nil unless Parts.MCP.
	MCP http.Handler
	// Notifications are the targets (Parts.Notify); nil: none.
	Notifications elicitation.Notifications
	// OnCreated is Parts.OnCreated (the MCP part calls it).
	OnCreated func(ctx context.Context, id, reviewURL string)
	// Metrics is Parts.Metrics (nil: none).
	Metrics *metrics.Counts
	// Secret is Parts.Secret (parts read their keys with it).
	Secret func(ctx context.Context, arn string) (string, error)

	closers []func() error

	signingOnce sync.Once
	signingKeys []signing.Key
	signingErr  error
}

// SigningKeys returns the deployment's one signing keyring
// (internal/signing: receipts, OAuth access tokens, the published key
// set), derived once, whoever asks first, from the page-token keyring:
// a.Keys (set by Pages), else the one the settings name (--token-keys,
// the page-token secret). Nil, and no error, when there is neither (an
// MCP function without the page-token secret).
func (a *App) SigningKeys(ctx context.Context) ([]signing.Key, error) {
	a.signingOnce.Do(func() {
		ring, s := a.Keys, a.Settings
		if ring == nil {
			if s.TokenKeys == "" && s.TokenSecretARN == "" {
				return
			}
			if ring, a.signingErr = Keyring(ctx, s, a.Secret); a.signingErr != nil {
				return
			}
		}
		if a.signingKeys, a.signingErr = signing.Derive(ring.Derive(signing.Purpose)); a.signingErr != nil {
			a.signingErr = fmt.Errorf("signing keys: %w", a.signingErr)
		}
	})
	return a.signingKeys, a.signingErr
}

// Build composes the service of s from parts: the store, the service over
// it with the template checker the review page renders with, the page-token
// keys and the review handlers (Parts.Pages), and the MCP handler
// (Parts.MCP). On error it closes what it opened.
func Build(ctx context.Context, s Settings, p Parts) (*App, error) {
	if p.Store == nil {
		return nil, errors.New("compose.Build: Parts.Store is nil")
	}
	a := &App{Settings: s, Log: p.Log, Now: p.Now, OnCreated: p.OnCreated, Secret: p.Secret, Metrics: p.Metrics}
	if a.Log == nil {
		a.Log = s.Logger(os.Stderr, false)
	}
	if a.Now == nil {
		a.Now = time.Now
	}
	if err := a.build(ctx, p); err != nil {
		_ = a.Close()
		return nil, err
	}
	return a, nil
}

func (a *App) build(ctx context.Context, p Parts) error {
	s := a.Settings
	store, err := p.Store(ctx, s)
	if err != nil {
		return err
	}
	a.Store = store
	if c, ok := store.(io.Closer); ok {
		a.closers = append(a.closers, c.Close)
	}
	a.Templates = review.NewTemplateChecker()
	if p.Notify != nil {
		if a.Notifications, err = p.Notify(ctx, a, p.Secret); err != nil {
			return err
		}
	}
	policy, err := s.ReviewerPolicy()
	if err != nil {
		return fmt.Errorf("--reviewers: %w", err)
	}
	a.Service = elicitation.NewService(elicitation.Config{
		Store: store, Now: a.Now, MaxWait: s.MaxWait, WaitMargin: s.WaitMargin, Retention: s.Retention, Templates: a.Templates,
		Notifications: a.Notifications, SignIn: s.SignIn(), Policy: policy, MaxPending: s.PendingBound(),
		Standing: elicitation.StandingPolicy{MaxTTL: s.StandingMaxTTL, RequireArgument: s.StandingRequireArgument},
		Observer: a.observer(),
	})
	if p.Pages != nil {
		if a.Pages, err = p.Pages(ctx, a); err != nil {
			return err
		}
	}
	if p.MCP != nil {
		if a.MCP, err = p.MCP(ctx, a); err != nil {
			return err
		}
	}
	return nil
}

// observer is the Service's observer: Metrics, or none.
func (a *App) observer() elicitation.Observer {
	if a.Metrics == nil {
		return nil
	}
	return a.Metrics
}

// EMF is Parts.Metrics of a Lambda function: the CloudWatch embedded
// metric format lines it writes to w (its standard output, which
// CloudWatch Logs reads) in the namespace the settings name, or nil with
// none (--metrics-namespace empty).
func EMF(s Settings, w io.Writer) *metrics.Counts {
	if s.MetricsNamespace == "" {
		return nil
	}
	return metrics.NewEMF(w, s.MetricsNamespace, s.MetricsPrincipals, nil)
}

// ExpirySweep notices expired requests for the metrics (a metrics.Expiry
// over the app's service), or does nothing without metrics: the notify
// function runs it on its schedule (the local server runs its own loop).
func ExpirySweep(a *App) func(ctx context.Context) error {
	if a.Metrics == nil {
		return func(context.Context) error { return nil }
	}
	e := &metrics.Expiry{Service: a.Service, Pending: a.Store, Gauges: a.Metrics}
	return func(ctx context.Context) error {
		_, err := e.Sweep(ctx)
		return err
	}
}

// insights computes the Insights page from the store, when it lists its
// requests (both stores do) and reviewers sign in (the page is theirs).
func (a *App) insights() review.InsightsSource {
	st, ok := a.Store.(metrics.InsightsStore)
	if !ok || !a.Settings.SignIn() {
		return nil
	}
	return func(ctx context.Context, now time.Time) (metrics.Insights, error) {
		return metrics.ComputeInsights(ctx, st, now)
	}
}

// Pages is Parts.Pages: the page-token keys (Keyring) and the review
// page and submission handlers over the app's service.
func Pages(ctx context.Context, a *App) (*review.Handler, error) {
	keys, err := Keyring(ctx, a.Settings, a.Secret)
	if err != nil {
		return nil, err
	}
	a.Keys = keys
	var trusted []string
	if o := review.Origin(a.Settings.PublicURL); o != "" {
		trusted = []string{o}
	}
	return review.New(review.Options{Service: a.Service, Tokens: keys, Logger: a.Log, Now: a.Now, Templates: a.Templates, TrustedOrigins: trusted, Insights: a.insights(),
		Decisions: a.Settings.ReviewLimiter()}), nil
}

// ReviewURL builds the review URL of request id with key, as the agent
// receives it (ReviewURL, with the settings' public URL).
func (a *App) ReviewURL(r *http.Request, id, key string) string {
	return ReviewURL(a.Settings.PublicURL, r, id, key)
}

// Close closes the store.
func (a *App) Close() error {
	var errs []error
	for _, c := range a.closers {
		if err := c(); err != nil {
			errs = append(errs, fmt.Errorf("close store: %w", err))
		}
	}
	a.closers = nil
	return errors.Join(errs...)
}

// ReviewURL is the one place review URLs are built: base (the public URL;
// locally the review listener's address when none is set) and the path
// /review/{id}/{key}; without a base, the base the deployment's front end
// put in the request's context (WithRequestBase: on Lambda the API's own
// address, from its API Gateway context); else the request's Host, over
// the scheme of X-Forwarded-Proto, else https on a TLS connection, else
// http; without a request, the path alone.
func ReviewURL(base string, r *http.Request, id, key string) string {
	return ReviewBase(base, r) + review.Path(id, key)
}

// ReviewBase is the base of ReviewURL (no trailing slash; empty without
// base or request): what reviewer sign-in builds its redirect URI and
// cookie path from.
func ReviewBase(base string, r *http.Request) string {
	if base != "" {
		return strings.TrimRight(base, "/")
	}
	if r == nil {
		return ""
	}
	if base, ok := r.Context().Value(requestBaseKey{}).(string); ok && base != "" {
		return strings.TrimRight(base, "/")
	}
	return review.RequestOrigin(r)
}

type requestBaseKey struct{}

// WithRequestBase returns ctx carrying base, the address a deployment's
// front end serves the request's API at (on Lambda the API Gateway domain
// and stage, set by lambdaconfig.Route): ReviewBase prefers it to the
// request's Host. It keeps compose free of any one front end's types.
func WithRequestBase(ctx context.Context, base string) context.Context {
	return context.WithValue(ctx, requestBaseKey{}, base)
}

// Keyring returns the page-token keyring: Settings.TokenKeys; else the
// secret Settings.TokenSecretARN names, read once with secret; else a
// random key generated once and kept in Settings.DataDir.
func Keyring(ctx context.Context, s Settings, secret func(context.Context, string) (string, error)) (*pagetoken.Keyring, error) {
	name := "--token-keys ($" + Env("token-keys") + ")"
	text := s.TokenKeys
	switch {
	case text != "":
	case s.TokenSecretARN != "":
		if secret == nil {
			return nil, fmt.Errorf("%s is set but this deployment reads no secrets: set %s", Env("token-secret-arn"), Env("token-keys"))
		}
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		v, err := secret(ctx, s.TokenSecretARN)
		if err != nil {
			return nil, fmt.Errorf("read the page-token secret %s: %w", s.TokenSecretARN, err)
		}
		text, name = v, "the page-token secret "+s.TokenSecretARN
	case s.DataDir != "":
		text, err := keptSecret(s.DataDir, "token-keys")
		if err != nil {
			return nil, err
		}
		k, err := ParseKeyring(text)
		if err != nil {
			return nil, fmt.Errorf("page-token secret in %s: %w", filepath.Join(s.DataDir, "token-keys"), err)
		}
		return k, nil
	default:
		return nil, fmt.Errorf("neither %s nor %s is set: the review page cannot sign its tokens", Env("token-secret-arn"), Env("token-keys"))
	}
	k, err := ParseKeyring(text)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return k, nil
}

// keptSecret reads the keyring text kept in dir/name, generating a random
// key ("local:<secret>") on first use.
func keptSecret(dir, name string) (string, error) {
	path := filepath.Join(dir, name)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return "", fmt.Errorf("data directory: %w", err)
		}
		b = []byte("local:" + pagetoken.GenerateSecret())
		if err := os.WriteFile(path, b, 0o600); err != nil {
			return "", fmt.Errorf("keep %s: %w", path, err)
		}
	} else if err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	return strings.TrimSpace(string(b)), nil
}

// StateKeys returns the push-state sealer of a's settings: StateKeys;
// else the secret StateSecretARN names; else a random key kept in DataDir;
// nil (no sessionless push) when none is configured (a Lambda stack
// without the secret).
func StateKeys(ctx context.Context, a *App) (*sealer.Keyring, error) {
	s := a.Settings
	text, name := s.StateKeys, "--state-keys ($"+Env("state-keys")+")"
	switch {
	case text != "":
	case s.StateSecretARN != "" && a.Secret != nil:
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		v, err := a.Secret(ctx, s.StateSecretARN)
		if err != nil {
			return nil, fmt.Errorf("read the push-state secret %s: %w", s.StateSecretARN, err)
		}
		text, name = v, "the push-state secret "+s.StateSecretARN
	case s.DataDir != "" && s.Store == "bolt":
		v, err := keptSecret(s.DataDir, "state-keys")
		if err != nil {
			return nil, err
		}
		text, name = v, filepath.Join(s.DataDir, "state-keys")
	default:
		return nil, nil
	}
	ring, err := sealer.ParseKeyring(text)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return ring, nil
}

// InitialKeyID is the key id of a bare secret: the value Secrets Manager
// generates when the stack is created (sealer.InitialKeyID).
const InitialKeyID = sealer.InitialKeyID

// ParseKeyring reads the page-token keyring with the one keyring parser
// (sealer.ParseKeys): keyring text ("k1:NEWBASE64,k0:OLDBASE64", the
// first key current), or a bare base64 secret, which is the key
// InitialKeyID.
func ParseKeyring(text string) (*pagetoken.Keyring, error) {
	return pagetoken.ParseKeyring(text)
}
