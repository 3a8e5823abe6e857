package apikey

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

// AuthOptions configure Middleware. Store, Token or both.
type AuthOptions struct {
	// Store holds the API keys; nil: API keys are refused.
	Store Store
	// Token verifies a bearer token that is not an API key: this
	// deployment's OAuth access tokens (internal/authserver); nil: only
	// API keys. Its TokenInfo must have every one of Scopes, or the
	// request gets 403 insufficient_scope.
	Token  auth.TokenVerifier
	Scopes []string
	// ResourceMetadata returns the URL of the endpoint's RFC 9728
	// metadata for a request, named in every challenge so that an OAuth
	// client finds the authorization server; nil: none.
	ResourceMetadata func(r *http.Request) string
	// Realm names the protection space in WWW-Authenticate; default
	// "mcp-elicitation".
	Realm string
	// CacheTTL, when positive, keeps a verified key in memory that long, so
	// that a busy agent costs one store read per CacheTTL instead of one per
	// call. A revocation then takes effect within CacheTTL.
	CacheTTL time.Duration
	// Logger receives store failures; nil discards them.
	Logger *slog.Logger
	// Now is the clock; default time.Now.
	Now func() time.Time
}

// Middleware returns an http.Handler middleware that lets a request through
// only with an active key in "Authorization: Bearer <key>", or a token
// AuthOptions.Token accepts. The request's context then carries the SDK's
// auth.TokenInfo, whose UserID is the key's principal or the token's
// person (the MCP SDK hands it to tool handlers as req.Extra.TokenInfo).
// A missing, malformed, unknown, revoked or expired credential gets 401
// with a WWW-Authenticate challenge and nothing else, a token without the
// scopes 403 insufficient_scope; a store failure gets 503 without
// details.
func Middleware(o AuthOptions) func(http.Handler) http.Handler {
	realm := o.Realm
	if realm == "" {
		realm = "mcp-elicitation"
	}
	verify := Verifier(o)
	// The SDK's middleware is how a TokenInfo reaches the SDK's handlers: it
	// is handed the one verified here.
	require := auth.RequireBearerToken(func(ctx context.Context, _ string, _ *http.Request) (*auth.TokenInfo, error) {
		return ctx.Value(verifiedKey{}).(*auth.TokenInfo), nil
	}, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})
	return func(next http.Handler) http.Handler {
		inner := require(next)
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			// Parsed as the SDK's middleware parses it.
			fields := strings.Fields(r.Header.Get("Authorization"))
			presented := len(fields) > 0 && strings.EqualFold(fields[0], "bearer")
			var info *auth.TokenInfo
			err := auth.ErrInvalidToken
			switch {
			case !presented || len(fields) != 2:
			case WellFormed(fields[1]):
				if o.Store != nil {
					info, err = verify(r.Context(), fields[1], r)
				}
			case o.Token != nil:
				if info, err = o.Token(r.Context(), fields[1], r); err == nil && !hasAll(info.Scopes, o.Scopes) {
					err = errInsufficientScope
				}
			}
			if err != nil {
				refuse(w, challenge{realm: realm, o: o, r: r}, presented, err)
				return
			}
			inner.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), verifiedKey{}, info)))
		})
	}
}

type verifiedKey struct{}

var errInsufficientScope = errors.New("insufficient scope")

func hasAll(have, want []string) bool {
	for _, s := range want {
		if !slices.Contains(have, s) {
			return false
		}
	}
	return true
}

// challenge is what a refusal's WWW-Authenticate names.
type challenge struct {
	realm string
	o     AuthOptions
	r     *http.Request
}

// header is the RFC 6750 challenge: the error only when a bearer token
// was presented, and for OAuth clients the resource's metadata (RFC 9728)
// and the scopes to ask for.
func (c challenge) header(code string) string {
	v := `Bearer realm="` + c.realm + `"`
	if code != "" {
		v += `, error="` + code + `"`
	}
	if c.o.ResourceMetadata != nil {
		v += `, resource_metadata="` + c.o.ResourceMetadata(c.r) + `"`
	}
	if c.o.Token != nil && len(c.o.Scopes) > 0 {
		v += `, scope="` + strings.Join(c.o.Scopes, " ") + `"`
	}
	return v
}

// refuse answers a refused request with no body: 401 and the challenge
// for a missing or invalid credential, 403 for a token without the
// scopes, a bland 503 for a store failure.
func refuse(w http.ResponseWriter, c challenge, presented bool, err error) {
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Length", "0")
	switch {
	case errors.Is(err, errInsufficientScope):
		h.Set("WWW-Authenticate", c.header("insufficient_scope"))
		w.WriteHeader(http.StatusForbidden)
	case !errors.Is(err, auth.ErrInvalidToken):
		h.Set("Retry-After", "1")
		w.WriteHeader(http.StatusServiceUnavailable)
	case presented:
		h.Set("WWW-Authenticate", c.header("invalid_token"))
		w.WriteHeader(http.StatusUnauthorized)
	default:
		h.Set("WWW-Authenticate", c.header(""))
		w.WriteHeader(http.StatusUnauthorized)
	}
}

// Verifier returns the auth.TokenVerifier Middleware is built on: it yields
// TokenInfo{UserID: principal, Expiration: the key's expiry (zero if none)}.
// An unknown, revoked or expired key is auth.ErrInvalidToken; a store
// failure is logged and returned as a bland error.
func Verifier(o AuthOptions) auth.TokenVerifier {
	v := &verifier{o: o, cache: map[string]cached{}}
	if v.o.Now == nil {
		v.o.Now = time.Now
	}
	if v.o.Logger == nil {
		v.o.Logger = slog.New(slog.DiscardHandler)
	}
	return v.verify
}

type cached struct {
	key   Key
	until time.Time
}

type verifier struct {
	o     AuthOptions
	mu    sync.Mutex
	cache map[string]cached // by hash
}

// errUnavailable is what a client sees when the store fails.
var errUnavailable = errors.New("authentication unavailable")

func (v *verifier) verify(ctx context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
	now := v.o.Now()
	if !WellFormed(token) {
		return nil, auth.ErrInvalidToken
	}
	h := Hash(token)
	var k Key
	v.mu.Lock()
	c, ok := v.cache[h]
	v.mu.Unlock()
	if ok && now.Before(c.until) && c.key.Active(now) {
		k = c.key
	} else {
		var err error
		k, err = Verify(ctx, v.o.Store, token, now)
		switch {
		case errors.Is(err, ErrInvalid):
			return nil, auth.ErrInvalidToken
		case err != nil:
			v.o.Logger.ErrorContext(ctx, "API key lookup failed", "err", err)
			return nil, errUnavailable
		}
		if v.o.CacheTTL > 0 {
			v.mu.Lock()
			if len(v.cache) > 1000 {
				clear(v.cache)
			}
			v.cache[h] = cached{key: k, until: now.Add(v.o.CacheTTL)}
			v.mu.Unlock()
		}
	}
	return &auth.TokenInfo{UserID: k.Principal, Expiration: k.ExpiresAt, Extra: map[string]any{"apiKeyID": k.ID}}, nil
}
