// Package authserver is the deployment as the OAuth 2.1 authorization
// server of its own MCP endpoint: MCP clients register (or name a client
// ID metadata document), send the person here, and get tokens for /mcp;
// the person signs in with the deployment's reviewer sign-in (the OpenID
// Connect issuer, internal/reviewauth) and consents on a page of the
// review listener. The protocol is github.com/zitadel/oidc/v3's op
// package; this package adds what op leaves to its storage and its
// caller: the store (internal/grant), PKCE S256 required, the RFC 8707
// resource each token is bound to, codes redeemed once, refresh tokens
// rotated with reuse detection, the consent page, RFC 8414 metadata and
// RFC 9207's iss in the response, and the access-token check of the
// protected resource (Verify).
//
// It knows nothing of MCP: internal/compose/mcpendpoint hands Verify's
// answer to the MCP SDK.
package authserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"

	"github.com/mcp-elicitation/elicitation/internal/grant"
	"github.com/mcp-elicitation/elicitation/internal/sealer"
)

// The paths this package serves, below the deployment's public base.
const (
	AuthorizePath = "/oauth/authorize"
	TokenPath     = "/oauth/token"
	RevokePath    = "/oauth/revoke"
	KeysPath      = "/oauth/keys"
	RegisterPath  = "/oauth/register"
	// ConsentPath is under /review so that reviewer sign-in guards it
	// and its session cookie (path /review) reaches it.
	ConsentPath = "/review/oauth/consent"
	// MetadataPath is RFC 8414's; OpenID discovery is served beside it.
	MetadataPath = "/.well-known/oauth-authorization-server"
	// ResourcePath is the protected resource: the MCP endpoint.
	ResourcePath = "/mcp"
)

// DefaultScopes are the scopes of the MCP endpoint: one, for every tool.
var DefaultScopes = []string{"elicitation"}

// Client is what the server needs to know of an MCP client
// (internal/clientreg finds it: registered, a metadata document, or the
// operator's).
type Client struct {
	ID           string
	Name         string
	RedirectURIs []string
	// Native: every redirect URI is loopback (any port) or a private-use
	// scheme (RFC 8252).
	Native bool
	// AuthMethod is "none" (public, PKCE alone), "client_secret_basic"
	// or "client_secret_post".
	AuthMethod string
	// CheckSecret checks a confidential client's secret; nil for a
	// public client.
	CheckSecret func(secret string) bool
	// Refresh: the client may use refresh tokens (it registered the
	// refresh_token grant).
	Refresh bool
}

// Config configures a Server.
type Config struct {
	Store grant.Store
	// Clients finds a client by id; an unknown one is an error.
	Clients func(ctx context.Context, id string) (Client, error)
	// Keys are the keyring's keys derived for KeyPurpose, the first
	// current: the ES256 signing keys come from them.
	Keys []sealer.Key
	// Base returns the deployment's public base URL for a request
	// (scheme, host and any path prefix, no trailing slash): the issuer,
	// and Base + ResourcePath the resource.
	Base func(r *http.Request) string
	// Resource returns the protected resource's URL for a request to it
	// or to this server (the MCP endpoint's URL, as clients name it);
	// default Base + ResourcePath.
	Resource func(r *http.Request) string
	// Insecure lets the issuer be plain http (loopback, for one machine
	// and tests).
	Insecure bool
	// Scopes the MCP endpoint knows; default DefaultScopes.
	Scopes []string
	// AccessTTL is an access token's life (default 1 hour), RefreshTTL a
	// family's (default 30 days; rotation does not extend it), LoginTTL
	// how long a person has to sign in and consent (default 10 minutes).
	AccessTTL, RefreshTTL, LoginTTL time.Duration
	// RevocationCacheTTL bounds how long Verify trusts a family it found
	// live, so that a busy agent costs one store read per family and
	// period, not one per call; a revocation by another process takes
	// effect within it (at once in this process). Default (zero) 30
	// seconds; negative: no cache, a read per Verify.
	RevocationCacheTTL time.Duration
	Now                func() time.Time
	Logger             *slog.Logger
	// Consent renders the consent page; default the built-in page.
	Consent ConsentPage
}

// Server is the authorization server. Safe for concurrent use.
type Server struct {
	cfg      Config
	keys     []signingKey
	provider *op.Provider
	log      *slog.Logger

	mu   sync.Mutex
	live map[string]time.Time // family id → checked live until
}

// New returns a Server for cfg.
func New(cfg Config) (*Server, error) {
	if cfg.Store == nil || cfg.Clients == nil || cfg.Base == nil {
		return nil, errors.New("authorization server: Store, Clients and Base are required")
	}
	keys, err := deriveKeys(cfg.Keys)
	if err != nil {
		return nil, fmt.Errorf("authorization server: %w", err)
	}
	setDefaults(&cfg)
	s := &Server{cfg: cfg, keys: keys, log: cfg.Logger, live: map[string]time.Time{}}
	opts := []op.Option{
		op.WithCustomAuthEndpoint(op.NewEndpoint(strings.TrimPrefix(AuthorizePath, "/"))),
		op.WithCustomTokenEndpoint(op.NewEndpoint(strings.TrimPrefix(TokenPath, "/"))),
		op.WithCustomRevocationEndpoint(op.NewEndpoint(strings.TrimPrefix(RevokePath, "/"))),
		op.WithCustomKeysEndpoint(op.NewEndpoint(strings.TrimPrefix(KeysPath, "/"))),
		op.WithCustomUserinfoEndpoint(op.NewEndpoint("oauth/userinfo")),
		op.WithCustomIntrospectionEndpoint(op.NewEndpoint("oauth/introspect")),
		op.WithCustomEndSessionEndpoint(op.NewEndpoint("oauth/end_session")),
		op.WithLogger(cfg.Logger),
	}
	if cfg.Insecure {
		opts = append(opts, op.WithAllowInsecure())
	}
	d, err := keys[0].priv.Bytes()
	if err != nil {
		return nil, fmt.Errorf("authorization server: signing key: %w", err)
	}
	var cryptoKey [32]byte
	copy(cryptoKey[:], d)
	s.provider, err = op.NewProvider(&op.Config{
		CryptoKey:             cryptoKey,
		CodeMethodS256:        true,
		AuthMethodPost:        true,
		GrantTypeRefreshToken: true,
		SupportedScopes:       append([]string{oidc.ScopeOpenID, oidc.ScopeOfflineAccess}, cfg.Scopes...),
	}, storage{s}, func(bool) (op.IssuerFromRequest, error) { return cfg.Base, nil }, opts...)
	if err != nil {
		return nil, fmt.Errorf("authorization server: %w", err)
	}
	return s, nil
}

func setDefaults(cfg *Config) {
	if cfg.Resource == nil {
		cfg.Resource = func(r *http.Request) string { return cfg.Base(r) + ResourcePath }
	}
	if len(cfg.Scopes) == 0 {
		cfg.Scopes = DefaultScopes
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&cfg.AccessTTL, time.Hour)
	def(&cfg.RefreshTTL, 30*24*time.Hour)
	def(&cfg.LoginTTL, 10*time.Minute)
	if cfg.RevocationCacheTTL == 0 {
		cfg.RevocationCacheTTL = 30 * time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Consent == nil {
		cfg.Consent = defaultConsent
	}
}

func (s *Server) now() time.Time { return s.cfg.Now() }

// accessExpiry is an access token's expiry: AccessTTL, never past its
// family's.
func (s *Server) accessExpiry(f *family) time.Time {
	if t := s.now().Add(s.cfg.AccessTTL); t.Before(f.Expires) {
		return t
	}
	return f.Expires
}

// Resource is the protected resource's URL for r.
func (s *Server) Resource(r *http.Request) string { return s.cfg.Resource(r) }

// Issuer is the authorization server's issuer URL for r.
func (s *Server) Issuer(r *http.Request) string { return s.cfg.Base(r) }

// Scopes are the scopes the MCP endpoint knows.
func (s *Server) Scopes() []string { return slices.Clone(s.cfg.Scopes) }

type resourceKey struct{}

// resourceOf is the resource an authorization request names, checked by
// the interceptor: the one this server protects.
func (s *Server) resourceOf(ctx context.Context) (string, error) {
	if r, ok := ctx.Value(resourceKey{}).(string); ok && r != "" {
		return r, nil
	}
	return "", oidc.ErrServerError().WithDescription("no resource for the authorization request")
}

// Handler serves the authorization server's endpoints (AuthorizePath,
// TokenPath, RevokePath, KeysPath, the metadata) and the consent page at
// ConsentPath, which the caller puts behind reviewer sign-in. register,
// when not nil, serves RegisterPath (RFC 7591).
func (s *Server) Handler(register http.Handler) http.Handler {
	mux := http.NewServeMux()
	opRoutes := s.intercept(s.provider)
	for _, p := range []string{AuthorizePath, TokenPath, RevokePath, KeysPath, "/.well-known/openid-configuration"} {
		mux.Handle(p, opRoutes)
	}
	mux.HandleFunc(MetadataPath, s.metadata)
	mux.Handle(ConsentPath, http.HandlerFunc(s.consent))
	if register != nil {
		mux.Handle(RegisterPath, register)
	}
	return mux
}

// Paths are the paths Handler answers, for a router in front of it.
func Paths() []string {
	return []string{AuthorizePath, TokenPath, RevokePath, KeysPath, RegisterPath, ConsentPath, MetadataPath, "/.well-known/openid-configuration"}
}
