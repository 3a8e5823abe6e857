package apikey

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

// AuthOptions configure Middleware. Store is required.
type AuthOptions struct {
	Store Store
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
// only with an active key in "Authorization: Bearer <key>". The request's
// context then carries the SDK's auth.TokenInfo, whose UserID is the key's
// principal (the MCP SDK hands it to tool handlers as
// req.Extra.TokenInfo). A missing, malformed, unknown, revoked or expired key
// gets 401 with a WWW-Authenticate challenge and nothing else; a store
// failure gets 503 without details.
func Middleware(o AuthOptions) func(http.Handler) http.Handler {
	realm := o.Realm
	if realm == "" {
		realm = "mcp-elicitation"
	}
	require := auth.RequireBearerToken(Verifier(o), &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})
	return func(next http.Handler) http.Handler {
		// The SDK middleware answers refusals itself; a request it lets
		// through reaches next with the original writer.
		inner := require(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			c := w.(*challenger)
			c.passed = true
			next.ServeHTTP(c.ResponseWriter, r)
		}))
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			inner.ServeHTTP(&challenger{ResponseWriter: w, realm: realm, token: hasBearer(r)}, r)
		})
	}
}

// hasBearer reports whether r presents a bearer token (RFC 6750 names the
// error only then).
func hasBearer(r *http.Request) bool {
	scheme, _, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	return strings.EqualFold(scheme, "bearer")
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

// challenger rewrites the SDK middleware's refusals (never the responses of
// the handler behind it): a 401 gets the WWW-Authenticate challenge (RFC
// 6750) and an empty body; any other refusal (a store failure) becomes a
// bland 503.
type challenger struct {
	http.ResponseWriter
	realm   string
	token   bool // the request presented a bearer token
	passed  bool // the request reached the handler behind the middleware
	refused bool
}

func (c *challenger) WriteHeader(code int) {
	if c.passed {
		c.ResponseWriter.WriteHeader(code)
		return
	}
	c.refused = true
	h := c.ResponseWriter.Header()
	for k := range h {
		delete(h, k)
	}
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Length", "0")
	if code == http.StatusUnauthorized {
		challenge := `Bearer realm="` + c.realm + `"`
		if c.token {
			challenge += `, error="invalid_token"`
		}
		h.Set("WWW-Authenticate", challenge)
	} else {
		code = http.StatusServiceUnavailable
		h.Set("Retry-After", "1")
	}
	c.ResponseWriter.WriteHeader(code)
}

func (c *challenger) Write(b []byte) (int, error) {
	if c.refused {
		return len(b), nil // the SDK's error text stays on the server
	}
	return c.ResponseWriter.Write(b)
}
