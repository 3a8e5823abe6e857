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
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
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
	"github.com/mcp-elicitation/elicitation/internal/ratelimit"
	"github.com/mcp-elicitation/elicitation/internal/signing"
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
	// MetadataPath is RFC 8414's; OpenID discovery (discoveryPath) serves
	// the same document.
	MetadataPath  = "/.well-known/oauth-authorization-server"
	discoveryPath = "/.well-known/openid-configuration"
	// ResourcePath is the protected resource: the MCP endpoint.
	ResourcePath = "/mcp"
)

// The default bounds of Config.Requests: far above what a deployment's
// hosts send (a token request per person and hour, as access tokens
// expire), so that only a flood meets them; a client's above a source's,
// so that one source cannot spend a client's.
var (
	DefaultRequestsPerSource = ratelimit.Rate{Count: 3000, Per: time.Hour}
	DefaultRequestsPerClient = ratelimit.Rate{Count: 10000, Per: time.Hour}
	DefaultRequests          = ratelimit.Rate{Count: 30000, Per: time.Hour}
)

// DefaultScopes are the scopes of the MCP endpoint: one, for every tool.
var DefaultScopes = []string{"elicitation"}

// Client is what the server needs to know of an MCP client
// (internal/clientreg finds it: registered, a metadata document, or the
// operator's).
type Client struct {
	ID   string
	Name string
	// RedirectURIs each pass clientreg.CheckRedirectURI: https and
	// private-use schemes are matched exactly, loopback http on any port
	// (RFC 8252).
	RedirectURIs []string
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

// ErrUnknownClient, wrapped in the error of Config.Clients, says that no
// client has the id (the token and revocation endpoints answer
// invalid_client, and a client then registers again); any other error
// is the lookup failing (server_error, and the client keeps what it has).
var ErrUnknownClient = errors.New("unknown client")

// Config configures a Server.
type Config struct {
	Store grant.Store
	// Clients finds a client by id; an unknown one is an error wrapping
	// ErrUnknownClient.
	Clients func(ctx context.Context, id string) (Client, error)
	// Keys is the deployment's signing keyring (internal/signing), the
	// first current.
	Keys []signing.Key
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
	// Requests bounds the requests that cost the store work (token,
	// revocation and authorization requests) per source, per client id
	// they name (ratelimit.Limiter.PerClient) and in all; default
	// DefaultRequestsPerSource, DefaultRequestsPerClient and
	// DefaultRequests. Past it a request is answered 429
	// temporarily_unavailable with Retry-After.
	Requests *ratelimit.Limiter
	// Authorizations bounds authorization requests (each keeps a sign-in
	// in progress for LoginTTL) per source and in all; default 60 an hour
	// per source, 5,000 in all. Source names a request's source (default
	// its remote address; behind a gateway, the caller's).
	Authorizations *ratelimit.Limiter
	Source         func(*http.Request) string
	Now            func() time.Time
	Logger         *slog.Logger
	// Consent renders the consent page; default the built-in page.
	Consent ConsentPage
}

// Server is the authorization server. Safe for concurrent use.
type Server struct {
	cfg      Config
	keys     []signingKey
	provider *op.Provider
	log      *slog.Logger

	mu     sync.Mutex
	live   map[string]time.Time // family id → checked live until
	tokens map[string]verified  // SHA-256 of a token and the resource → what it grants
}

// New returns a Server for cfg.
func New(cfg Config) (*Server, error) {
	if cfg.Store == nil || cfg.Clients == nil || cfg.Base == nil {
		return nil, errors.New("authorization server: Store, Clients and Base are required")
	}
	if len(cfg.Keys) == 0 {
		return nil, errors.New("authorization server: no signing keys")
	}
	keys := make([]signingKey, len(cfg.Keys))
	for i, k := range cfg.Keys {
		keys[i] = signingKey{k: k}
	}
	setDefaults(&cfg)
	s := &Server{cfg: cfg, keys: keys, log: cfg.Logger, live: map[string]time.Time{}, tokens: map[string]verified{}}
	opts := []op.Option{
		op.WithCustomAuthEndpoint(op.NewEndpoint(strings.TrimPrefix(AuthorizePath, "/"))),
		op.WithCustomTokenEndpoint(op.NewEndpoint(strings.TrimPrefix(TokenPath, "/"))),
		op.WithCustomRevocationEndpoint(op.NewEndpoint(strings.TrimPrefix(RevokePath, "/"))),
		op.WithCustomKeysEndpoint(op.NewEndpoint(strings.TrimPrefix(KeysPath, "/"))),
		op.WithCustomUserinfoEndpoint(op.NewEndpoint("oauth/userinfo")),
		op.WithCustomIntrospectionEndpoint(op.NewEndpoint("oauth/introspect")),
		op.WithCustomEndSessionEndpoint(op.NewEndpoint("oauth/end_session")),
	}
	if cfg.Insecure {
		opts = append(opts, op.WithAllowInsecure())
	}
	var cryptoKey [32]byte
	copy(cryptoKey[:], s.secret("op crypto"))
	var err error
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
	if cfg.Authorizations == nil {
		cfg.Authorizations = ratelimit.New(ratelimit.Rate{Count: 60, Per: time.Hour}, ratelimit.Rate{Count: 5000, Per: time.Hour}, 10000)
	}
	if cfg.Requests == nil {
		cfg.Requests = ratelimit.New(DefaultRequestsPerSource, DefaultRequests, 10000).PerClient(DefaultRequestsPerClient)
	}
	if cfg.Source == nil {
		cfg.Source = ratelimit.RemoteIP
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

// secret is a 32-byte secret for purpose, derived from the current
// signing key: the consent form's MAC, op's code encryption, the refresh
// secrets' MAC.
func (s *Server) secret(purpose string) []byte { return s.keySecret(0, purpose) }

// keySecret is secret derived from the signing key of index i.
func (s *Server) keySecret(i int, purpose string) []byte {
	d, _ := s.keys[i].k.Private.Bytes()
	b, _ := hkdf.Key(sha256.New, d, nil, "elicitation oauth "+purpose, 32)
	return b
}

// refreshSecret is a new refresh secret of the family famID: a nonce and
// its MAC, so that a secret this server issued is told from a made-up
// one (issuedSecret), and only the former, used after its rotation,
// revokes the family.
func (s *Server) refreshSecret(famID string) string {
	n := newID()
	return n + "." + s.refreshMAC(0, famID, n)
}

// issuedSecret is whether secret is one refreshSecret made for famID,
// under any of the signing keys.
func (s *Server) issuedSecret(famID, secret string) bool {
	n, mac, ok := strings.Cut(secret, ".")
	for i := range s.keys {
		if ok && hmac.Equal([]byte(mac), []byte(s.refreshMAC(i, famID, n))) {
			return true
		}
	}
	return false
}

func (s *Server) refreshMAC(key int, famID, nonce string) string {
	m := hmac.New(sha256.New, s.keySecret(key, "refresh token"))
	m.Write([]byte(famID + "\x00" + nonce))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

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
// when not nil, serves RegisterPath (RFC 7591). Each request's context
// names its source (ratelimit.WithSource, Config.Source).
func (s *Server) Handler(register http.Handler) http.Handler {
	mux := http.NewServeMux()
	opRoutes := s.intercept(s.provider)
	for _, p := range []string{AuthorizePath, TokenPath, RevokePath, KeysPath} {
		mux.Handle(p, opRoutes)
	}
	// OpenID discovery is the same document (op's own names endpoints
	// not routed here, grants and response types not served, and no
	// registration).
	mux.HandleFunc(MetadataPath, s.metadata)
	mux.HandleFunc(discoveryPath, s.metadata)
	mux.Handle(ConsentPath, http.HandlerFunc(s.consent))
	if register != nil {
		mux.Handle(RegisterPath, register)
	}
	// Every request names its source for the limits counted below it
	// (Config.Clients fetching a client ID metadata document).
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mux.ServeHTTP(w, r.WithContext(ratelimit.WithSource(r.Context(), s.cfg.Source(r))))
	})
}

// Paths are the paths Handler answers, for a router in front of it.
func Paths() []string {
	return []string{AuthorizePath, TokenPath, RevokePath, KeysPath, RegisterPath, ConsentPath, MetadataPath, discoveryPath}
}
