package authserver

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/grant"
)

// storage is op.Storage over a grant.Store: what op needs kept, and the
// rules op leaves to its storage (PKCE S256 required, the resource a
// token is for, one redemption per code, refresh rotation with reuse
// detection).
type storage struct {
	s *Server
}

var _ op.Storage = storage{}

var errUnsupported = errors.New("not supported by this authorization server")

func (st storage) CreateAuthRequest(ctx context.Context, req *oidc.AuthRequest, _ string) (op.AuthRequest, error) {
	if err := checkAuthRequest(ctx, req); err != nil {
		return nil, err
	}
	resource, err := st.s.resourceOf(ctx)
	if err != nil {
		return nil, err
	}
	now := st.s.now()
	// Each scope once: op keeps every scope it knows as often as it was
	// named, and a list repeated enough would not fit the sign-in's record.
	var scopes []string
	for _, sc := range req.Scopes {
		if !slices.Contains(scopes, sc) {
			scopes = append(scopes, sc)
		}
	}
	c, err := st.client(ctx, req.ClientID)
	if err != nil {
		return nil, err
	}
	if c.Refresh && !slices.Contains(scopes, oidc.ScopeOfflineAccess) {
		// A client that registered for refresh tokens gets them (op
		// issues one only with offline_access): the MCP authorization
		// flow asks for the resource's scopes, not OpenID's.
		scopes = append(scopes, oidc.ScopeOfflineAccess)
	}
	l := &login{
		ID: newID(), ClientID: req.ClientID, RedirectURI: req.RedirectURI, State: req.State, Nonce: req.Nonce,
		Scopes: scopes, ResponseType: req.ResponseType, ResponseMode: req.ResponseMode,
		Challenge: &oidc.CodeChallenge{Challenge: req.CodeChallenge, Method: req.CodeChallengeMethod},
		Resource:  resource, Created: now,
	}
	if l.version, err = put(ctx, st.s.cfg.Store, kindLogin, l.ID, l, now.Add(st.s.cfg.LoginTTL), 0); err != nil {
		return nil, err
	}
	return l, nil
}

// checkAuthRequest refuses what this server does not serve as asked. op
// calls CreateAuthRequest once it has verified the redirect URI, so it
// sends these errors there.
func checkAuthRequest(ctx context.Context, req *oidc.AuthRequest) error {
	switch {
	case req.ResponseMode != "" && req.ResponseMode != oidc.ResponseModeQuery:
		// op sends the error in the mode of req (the request it passed
		// here): the query, the one mode this server answers in.
		req.ResponseMode = oidc.ResponseModeQuery
		return oidc.ErrInvalidRequest().WithDescription("response_mode must be query, the only one this server supports")
	case req.CodeChallenge == "" || req.CodeChallengeMethod != oidc.CodeChallengeMethodS256:
		return oidc.ErrInvalidRequest().WithDescription("PKCE is required: send code_challenge with code_challenge_method=S256")
	case !s256Challenge(req.CodeChallenge):
		return oidc.ErrInvalidRequest().WithDescription("code_challenge must be the base64url SHA-256 of the code_verifier, 43 characters without padding (RFC 7636 4.2)")
	case len(req.State) > maxEchoed || len(req.Nonce) > maxEchoed:
		return oidc.ErrInvalidRequest().WithDescription("state and nonce: at most %d bytes each", maxEchoed)
	case slices.Contains(req.Prompt, oidc.PromptNone):
		// Every authorization asks for the person's consent, which
		// prompt=none forbids showing (OpenID Connect Core 3.1.2.6). The
		// reviewer's session cookie (path /review) does not reach the
		// authorization endpoint, so it knows a person only when a
		// sign-in in front of it put one in the context.
		if _, ok := elicitation.IdentityFrom(ctx); ok {
			return &oidc.Error{ErrorType: "consent_required", Description: "every authorization needs the person's consent: send the request without prompt=none"}
		}
		return oidc.ErrLoginRequired().WithDescription("the person must sign in and consent: send the request without prompt=none")
	}
	return nil
}

// maxEchoed bounds the state and the nonce a client sends (kept with the
// sign-in and sent back), well within a grant record.
const maxEchoed = 4096

// s256Challenge is whether c can be an S256 code challenge, the unpadded
// base64url SHA-256 of a verifier (RFC 7636 4.2): no verifier could match
// another at the token endpoint.
func s256Challenge(c string) bool {
	b, err := base64.RawURLEncoding.DecodeString(c)
	return len(c) == 43 && err == nil && len(b) == sha256.Size
}

func (st storage) AuthRequestByID(ctx context.Context, id string) (op.AuthRequest, error) {
	return st.s.login(ctx, id)
}

// AuthRequestByCode redeems a code (redeem); the store failing is a
// server_error (readFault).
func (st storage) AuthRequestByCode(ctx context.Context, c string) (op.AuthRequest, error) {
	l, err := st.redeem(ctx, c)
	if err != nil {
		return nil, st.readFault(ctx, err)
	}
	return l, nil
}

// readFault is err, returned to op where it answers every error
// invalid_grant (a code's redemption, a refresh token's read), which
// makes a client drop its code or its refresh token: when err is the
// store failing, not the request, it is logged here and marked for
// intercept to answer server_error instead (markFault).
func (st storage) readFault(ctx context.Context, err error) error {
	var oerr *oidc.Error
	if errors.As(err, &oerr) || errors.Is(err, op.ErrInvalidRefreshToken) {
		return err
	}
	st.s.log.ErrorContext(ctx, "read a code or a refresh token", "err", err)
	markFault(ctx)
	return err
}

// redeem marks the code's record redeemed, over the version it read, so
// that of two uses at once one redeems it; any other use is a replay
// (replayed).
func (st storage) redeem(ctx context.Context, c string) (*login, error) {
	key := hash(c)
	for range maxWrites {
		var rec code
		v, err := get(ctx, st.s.cfg.Store, kindCode, key, &rec)
		switch {
		case absent(err):
			return nil, errCodeUsed()
		case err != nil:
			return nil, err
		case rec.Redeemed:
			return nil, st.replayed(ctx, key, rec, v)
		}
		l, err := st.s.login(ctx, rec.Login)
		if err != nil {
			return nil, err
		}
		if !l.Consented || l.Challenge == nil {
			return nil, errCodeUsed()
		}
		rec.Redeemed, rec.Challenge = true, l.Challenge.Challenge
		v, err = put(ctx, st.s.cfg.Store, kindCode, key, rec, st.s.now().Add(st.s.cfg.RefreshTTL), v)
		if errors.Is(err, grant.ErrConflict) {
			continue // another use marked it first: this one is the replay
		}
		if err != nil {
			return nil, err
		}
		l.code, l.codeVersion = key, v
		return l, nil
	}
	return nil, errTooManyWrites
}

// replayed answers a code used again (rec, read at version v): the family
// its first redemption issued is revoked (OAuth 2.1 section 4.1.3); when
// that redemption has not linked one yet, the record is marked so that it
// issues nothing (link). A replay without the code's verifier could never
// have redeemed it (its author only saw the code, in a browser's history
// or a log): it is refused and changes nothing.
func (st storage) replayed(ctx context.Context, key string, rec code, v int64) error {
	if !provesCode(ctx, rec.Challenge) {
		return errCodeUsed()
	}
	for range maxWrites {
		switch {
		case rec.Family != "":
			f, err := st.s.family(ctx, rec.Family)
			if err == nil {
				st.s.log.WarnContext(ctx, "an authorization code was used again: the tokens issued from it are revoked", "client", f.ClientID)
				err = st.s.revoke(ctx, f)
			}
			if err != nil && !absent(err) {
				return err
			}
			return errCodeUsed()
		case rec.Replayed:
			return errCodeUsed()
		}
		rec.Replayed = true
		_, err := put(ctx, st.s.cfg.Store, kindCode, key, rec, st.s.now().Add(st.s.cfg.RefreshTTL), v)
		if !errors.Is(err, grant.ErrConflict) {
			if err != nil {
				return err
			}
			return errCodeUsed()
		}
		rec = code{}
		if v, err = get(ctx, st.s.cfg.Store, kindCode, key, &rec); absent(err) {
			return errCodeUsed()
		} else if err != nil {
			return err
		}
	}
	return errTooManyWrites
}

// link names f in the record of the code l was redeemed with, over the
// version the redemption wrote: a replay that marked the record since
// wins, and this redemption issues nothing (f is deleted).
func (st storage) link(ctx context.Context, l *login, f *family) error {
	rec := code{Login: l.ID, Redeemed: true, Challenge: l.Challenge.Challenge, Family: f.ID}
	_, err := put(ctx, st.s.cfg.Store, kindCode, l.code, rec, f.Expires, l.codeVersion)
	if err == nil {
		return nil
	}
	_ = st.s.cfg.Store.Delete(ctx, kindFamily, f.ID, f.version)
	if errors.Is(err, grant.ErrConflict) {
		return errCodeUsed()
	}
	return err
}

// provesCode is whether the token request presents the verifier of the
// S256 challenge.
func provesCode(ctx context.Context, challenge string) bool {
	verifier := tokenCallOf(ctx).verifier
	return challenge != "" && verifier != "" &&
		oidc.VerifyCodeChallenge(&oidc.CodeChallenge{Challenge: challenge, Method: oidc.CodeChallengeMethodS256}, verifier)
}

// errCodeUsed answers a code that is unknown, expired or used.
func errCodeUsed() *oidc.Error {
	return oidc.ErrInvalidGrant().WithDescription("the authorization code is unknown, expired or already used")
}

// maxWrites bounds the retries of a write that lost to another.
const maxWrites = 4

var errTooManyWrites = errors.New("too many concurrent writes")

func (st storage) SaveAuthCode(ctx context.Context, id, c string) error {
	_, err := put(ctx, st.s.cfg.Store, kindCode, hash(c), code{Login: id}, st.s.now().Add(codeTTL), 0)
	return err
}

func (st storage) DeleteAuthRequest(ctx context.Context, id string) error {
	r, err := st.s.cfg.Store.Get(ctx, kindLogin, id)
	if err == nil {
		err = st.s.cfg.Store.Delete(ctx, kindLogin, id, r.Version)
	}
	if absent(err) {
		return nil
	}
	return st.tokenError(ctx, err)
}

// tokenError is err, returned to op at the token endpoint, as OAuth says
// it: an *oidc.Error as it is; a refresh token another use rotated first
// (rotate's conflict) invalid_grant; anything else (the store failing) a
// server_error that says nothing of the cause, which is logged here (op
// answers a bare error with its text).
func (st storage) tokenError(ctx context.Context, err error) error {
	var oerr *oidc.Error
	switch {
	case err == nil || errors.As(err, &oerr):
		return err
	case errors.Is(err, op.ErrInvalidRefreshToken):
		return oidc.ErrInvalidGrant().WithDescription("the refresh token was used already").WithParent(err)
	}
	st.s.log.ErrorContext(ctx, "issue tokens", "err", err)
	return oidc.ErrServerError().WithParent(err)
}

// CreateAccessToken is the token of a client that may not refresh: it
// still gets a family, so that revoking it reaches the access token.
func (st storage) CreateAccessToken(ctx context.Context, req op.TokenRequest) (string, time.Time, error) {
	f, _, err := st.newFamily(ctx, req, false)
	if err != nil {
		return "", time.Time{}, st.tokenError(ctx, err)
	}
	return f.ID + "." + newID(), st.s.accessExpiry(f), nil
}

func (st storage) CreateAccessAndRefreshTokens(ctx context.Context, req op.TokenRequest, current string) (string, string, time.Time, error) {
	var f *family
	var secret string
	var err error
	if current == "" {
		f, secret, err = st.newFamily(ctx, req, true)
	} else {
		f, secret, err = st.rotate(ctx, req, current)
	}
	if err != nil {
		return "", "", time.Time{}, st.tokenError(ctx, err)
	}
	return f.ID + "." + newID(), f.ID + "." + secret, st.s.accessExpiry(f), nil
}

// newFamily keeps the family of the tokens a redemption issues, and
// returns its refresh secret when refresh.
func (st storage) newFamily(ctx context.Context, req op.TokenRequest, refresh bool) (*family, string, error) {
	l, ok := req.(*login)
	if !ok {
		return nil, "", oidc.ErrUnsupportedGrantType()
	}
	now := st.s.now()
	f := &family{
		ID: newID(), ClientID: l.ClientID, Principal: l.Principal, Person: l.Person, Scopes: l.Scopes, Resource: l.Resource,
		AuthTime: l.AuthTime, Expires: now.Add(st.s.cfg.RefreshTTL),
	}
	var secret string
	if refresh {
		secret = st.s.refreshSecret(f.ID)
		f.SecretHash = hash(secret)
	}
	var err error
	if f.version, err = put(ctx, st.s.cfg.Store, kindFamily, f.ID, f, f.Expires, 0); err != nil || l.code == "" {
		return f, secret, err
	}
	return f, secret, st.link(ctx, l, f)
}

// rotate replaces the family's refresh secret, over the version
// TokenRequestByRefreshToken read: of two uses of one refresh token, one
// rotates and the other finds a conflict. It returns the new secret.
func (st storage) rotate(ctx context.Context, req op.TokenRequest, current string) (*family, string, error) {
	f, ok := req.(*family)
	if fam, _, _ := splitToken(current); !ok || fam != f.ID {
		return nil, "", op.ErrInvalidRefreshToken
	}
	secret := st.s.refreshSecret(f.ID)
	f.SecretHash = hash(secret)
	v, err := put(ctx, st.s.cfg.Store, kindFamily, f.ID, f, f.Expires, f.version)
	if absent(err) {
		return nil, "", op.ErrInvalidRefreshToken
	}
	f.version = v
	return f, secret, err
}

// TokenRequestByRefreshToken finds the family of a refresh token
// (refreshFamily); the store failing is a server_error (readFault).
func (st storage) TokenRequestByRefreshToken(ctx context.Context, token string) (op.RefreshTokenRequest, error) {
	f, err := st.refreshFamily(ctx, token)
	if err != nil {
		return nil, st.readFault(ctx, err)
	}
	return f, nil
}

// refreshFamily finds a live family whose current secret the token
// carries; an earlier secret this server issued for a live family is a
// reuse, and revokes it; any other secret is only refused.
func (st storage) refreshFamily(ctx context.Context, token string) (*family, error) {
	famID, secret, ok := splitToken(token)
	if !ok {
		return nil, op.ErrInvalidRefreshToken
	}
	f, err := st.s.family(ctx, famID)
	if absent(err) || (err == nil && (f.Revoked || f.SecretHash == "")) {
		return nil, op.ErrInvalidRefreshToken
	}
	if err != nil {
		return nil, err
	}
	if !sameHash(f.SecretHash, hash(secret)) {
		if !st.s.issuedSecret(famID, secret) {
			return nil, op.ErrInvalidRefreshToken
		}
		st.s.log.WarnContext(ctx, "a refresh token was used again after its rotation: its family is revoked", "client", f.ClientID)
		if err := st.s.revoke(ctx, f); err != nil {
			return nil, err
		}
		return nil, op.ErrInvalidRefreshToken
	}
	return f, nil
}

func (st storage) TerminateSession(context.Context, string, string) error { return nil }

// RevokeToken revokes the family of a refresh token or an access token's
// id, when it was issued to clientID; anything else is answered as a
// success (RFC 7009 section 2.2). op names a subject only for a token it
// verified (a current refresh token, GetRefreshTokenInfo; a signed access
// token, its jti): without one, tokenOrID is the string as presented,
// and a family's id with any secret revokes nothing.
func (st storage) RevokeToken(ctx context.Context, tokenOrID, subject string, clientID string) *oidc.Error {
	famID, _, ok := splitToken(tokenOrID)
	if !ok || subject == "" {
		return nil
	}
	f, err := st.s.family(ctx, famID)
	if absent(err) || (err == nil && (f.ClientID != clientID || f.Principal != subject)) {
		return nil
	}
	if err == nil {
		err = st.s.revoke(ctx, f)
	}
	if err != nil {
		st.s.log.ErrorContext(ctx, "revoke a token", "err", err)
		return oidc.ErrServerError()
	}
	return nil
}

func (st storage) GetRefreshTokenInfo(ctx context.Context, clientID, token string) (string, string, error) {
	famID, secret, ok := splitToken(token)
	if !ok {
		return "", "", op.ErrInvalidRefreshToken
	}
	f, err := st.s.family(ctx, famID)
	if err != nil && !absent(err) {
		// Not ErrInvalidRefreshToken: op answers server_error, where it
		// would otherwise go on and revoke nothing.
		st.s.log.ErrorContext(ctx, "revoke a token", "err", err)
		return "", "", oidc.ErrServerError()
	}
	if err != nil || f.ClientID != clientID || !sameHash(f.SecretHash, hash(secret)) {
		return "", "", op.ErrInvalidRefreshToken
	}
	return f.Principal, token, nil
}

func (st storage) SigningKey(context.Context) (op.SigningKey, error) { return st.s.keys[0], nil }

func (st storage) SignatureAlgorithms(context.Context) ([]jose.SignatureAlgorithm, error) {
	return []jose.SignatureAlgorithm{jose.ES256}, nil
}

func (st storage) KeySet(context.Context) ([]op.Key, error) {
	out := make([]op.Key, len(st.s.keys))
	for i, k := range st.s.keys {
		out[i] = publicKey{k}
	}
	return out, nil
}

func (st storage) GetClientByClientID(ctx context.Context, id string) (op.Client, error) {
	c, err := st.client(ctx, id)
	if err != nil {
		return nil, err
	}
	return opClient{c: c, issuer: op.IssuerFromContext(ctx), scopes: st.s.cfg.Scopes}, nil
}

// client looks id up, its failure as OAuth says it: invalid_client for a
// client nobody knows (the client registers again), server_error, with
// nothing of the cause, when the lookup failed (op would otherwise answer
// a bare error as a server_error carrying its text).
func (st storage) client(ctx context.Context, id string) (Client, error) {
	c, err := st.s.cfg.Clients(ctx, id)
	switch {
	case errors.Is(err, ErrUnknownClient):
		return Client{}, oidc.ErrInvalidClient().WithDescription("unknown client: register again").WithParent(err)
	case err != nil:
		st.s.log.ErrorContext(ctx, "look up a client", "err", err)
		return Client{}, oidc.ErrServerError().WithParent(err)
	}
	return c, nil
}

func (st storage) AuthorizeClientIDSecret(ctx context.Context, id, secret string) error {
	c, err := st.client(ctx, id)
	if err != nil {
		return err
	}
	if c.CheckSecret == nil || !c.CheckSecret(secret) {
		return oidc.ErrInvalidClient().WithDescription("the client could not be authenticated")
	}
	return nil
}

func (st storage) SetUserinfoFromScopes(_ context.Context, u *oidc.UserInfo, userID, _ string, _ []string) error {
	u.Subject = userID
	return nil
}

func (st storage) SetUserinfoFromToken(_ context.Context, u *oidc.UserInfo, _, subject, _ string) error {
	u.Subject = subject
	return nil
}

func (st storage) SetIntrospectionFromToken(context.Context, *oidc.IntrospectionResponse, string, string, string) error {
	return errUnsupported
}

// GetPrivateClaimsFromScopes is op's fallback for a request of another
// kind than this server makes; it has the scopes only.
func (st storage) GetPrivateClaimsFromScopes(_ context.Context, _, _ string, scopes []string) (map[string]any, error) {
	return map[string]any{"scope": oidc.SpaceDelimitedArray(scopes)}, nil
}

// GetPrivateClaimsFromRequest puts in the access token what the protected
// resource needs without a store read: the granted scopes and the person
// as reviewer sign-in knew them (issuer, subject, e-mail, groups), so that
// a decision in the host is judged as the review page judges it.
func (st storage) GetPrivateClaimsFromRequest(_ context.Context, req op.TokenRequest, scopes []string) (map[string]any, error) {
	claims := map[string]any{"scope": oidc.SpaceDelimitedArray(scopes)}
	var p elicitation.Identity
	switch r := req.(type) {
	case *login:
		p = r.Person
	case *family:
		p = r.Person
	}
	if p.Subject != "" {
		claims[personClaim] = p
	}
	return claims, nil
}

// personClaim is the access token's claim naming the person.
const personClaim = "person"

func (st storage) GetKeyByIDAndClientID(context.Context, string, string) (*jose.JSONWebKey, error) {
	return nil, errUnsupported
}

func (st storage) ValidateJWTProfileScopes(context.Context, string, []string) ([]string, error) {
	return nil, errUnsupported
}

func (st storage) Health(context.Context) error { return nil }

// codeTTL is how long an authorization code may wait for its redemption.
const codeTTL = time.Minute

func (s *Server) login(ctx context.Context, id string) (*login, error) {
	l := &login{}
	v, err := get(ctx, s.cfg.Store, kindLogin, id, l)
	if absent(err) {
		return nil, oidc.ErrInvalidRequest().WithDescription("the sign-in is unknown or expired: start again from the application")
	}
	if err != nil {
		return nil, err
	}
	l.version = v
	return l, nil
}

func (s *Server) family(ctx context.Context, id string) (*family, error) {
	f := &family{}
	v, err := get(ctx, s.cfg.Store, kindFamily, id, f)
	if err != nil {
		return nil, err
	}
	f.version = v
	return f, nil
}

// revoke marks f revoked until it expires, so that every process (and
// the protected resource's cache, within its bound) refuses its tokens.
func (s *Server) revoke(ctx context.Context, f *family) error {
	for range maxWrites {
		if f.Revoked {
			s.forget(f.ID)
			return nil
		}
		f.Revoked = true
		_, err := put(ctx, s.cfg.Store, kindFamily, f.ID, f, f.Expires, f.version)
		if err == nil {
			s.forget(f.ID)
			return nil
		}
		if !errors.Is(err, grant.ErrConflict) {
			return err
		}
		if f, err = s.family(ctx, f.ID); err != nil {
			return fmt.Errorf("reread the token family: %w", err)
		}
	}
	return fmt.Errorf("revoke the token family: %w", errTooManyWrites)
}
