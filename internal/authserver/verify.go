package authserver

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"time"

	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"

	"github.com/mcp-elicitation/elicitation/internal/accesstoken"
)

// Access is what a valid access token grants.
type Access = accesstoken.Access

// The refusals of Verify.
var (
	ErrInvalidToken = accesstoken.ErrInvalid
	ErrUnavailable  = accesstoken.ErrUnavailable
)

var _ accesstoken.Verifier = (*Server)(nil)

// Verify checks an access token presented to the protected resource of
// r: signed by one of this deployment's keys, issued by it, not expired,
// bound to this resource (RFC 8707), its family not revoked. The family is
// read at most once per RevocationCacheTTL per process; the rest needs no
// store.
func (s *Server) Verify(ctx context.Context, token string, r *http.Request) (Access, error) {
	key := hash(token) + "\x00" + s.Resource(r)
	if a, famID, ok := s.cachedToken(key); ok {
		if err := s.checkLive(ctx, famID); err != nil {
			return Access{}, err
		}
		return a, nil
	}
	a, famID, err := s.verify(ctx, token, r)
	if err != nil {
		return Access{}, err
	}
	s.cacheToken(key, a, famID)
	return a, nil
}

// verify is Verify without the cache of tokens already verified.
func (s *Server) verify(ctx context.Context, token string, r *http.Request) (Access, string, error) {
	issuer := s.cfg.Base(r)
	v := op.NewAccessTokenVerifier(issuer, &op.OpenIDKeySet{Storage: storage{s}}, op.WithSupportedAccessTokenSigningAlgorithms("ES256"))
	claims, err := op.VerifyAccessToken[*oidc.AccessTokenClaims](ctx, token, v)
	if err != nil || !slices.ContainsFunc(claims.Audience, func(a string) bool { return sameResource(a, s.Resource(r)) }) {
		return Access{}, "", ErrInvalidToken
	}
	famID, _, ok := splitToken(claims.JWTID)
	if !ok {
		return Access{}, "", ErrInvalidToken
	}
	if err := s.checkLive(ctx, famID); err != nil {
		return Access{}, "", err
	}
	a := Access{Principal: claims.Subject, ClientID: claims.ClientID, Scopes: claims.Scopes, Expires: claims.Expiration.AsTime()}
	if raw, ok := claims.Claims[personClaim]; ok {
		b, _ := json.Marshal(raw)
		if json.Unmarshal(b, &a.Person) != nil || a.Person.Principal() != a.Principal {
			return Access{}, "", ErrInvalidToken
		}
	}
	return a, famID, nil
}

// verified is a token Verify accepted: what it grants and its family,
// whose liveness is still checked on every use.
type verified struct {
	access Access
	family string
}

// cachedToken returns what the token under key was found to grant, if
// it was, and is not past its expiry.
func (s *Server) cachedToken(key string) (Access, string, bool) {
	s.mu.Lock()
	v, ok := s.tokens[key]
	s.mu.Unlock()
	if !ok || !time.Now().Before(v.access.Expires) {
		return Access{}, "", false
	}
	return v.access, v.family, true
}

func (s *Server) cacheToken(key string, a Access, famID string) {
	s.mu.Lock()
	if len(s.tokens) >= maxLive {
		clear(s.tokens)
	}
	s.tokens[key] = verified{access: a, family: famID}
	s.mu.Unlock()
}

// checkLive reports whether the family famID is live, from the cache when
// it was found live within RevocationCacheTTL.
func (s *Server) checkLive(ctx context.Context, famID string) error {
	now := s.now()
	s.mu.Lock()
	until, ok := s.live[famID]
	s.mu.Unlock()
	if ok && now.Before(until) {
		return nil
	}
	f, err := s.family(ctx, famID)
	switch {
	case absent(err) || (err == nil && f.Revoked):
		return ErrInvalidToken
	case err != nil:
		s.log.ErrorContext(ctx, "read a token family", "err", err)
		return ErrUnavailable
	}
	s.mu.Lock()
	if len(s.live) >= maxLive {
		clear(s.live)
	}
	s.live[famID] = now.Add(s.cfg.RevocationCacheTTL)
	s.mu.Unlock()
	return nil
}

// maxLive bounds the cache of live families.
const maxLive = 10000

// forget drops famID from the cache: revoked here, refused here at once.
func (s *Server) forget(famID string) {
	s.mu.Lock()
	delete(s.live, famID)
	s.mu.Unlock()
}
