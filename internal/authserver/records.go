package authserver

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/zitadel/oidc/v3/pkg/oidc"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/grant"
)

// The kinds of grant.Record this package keeps.
const (
	kindLogin  = "login"  // an authorization request, from /authorize to the code's redemption
	kindCode   = "code"   // an authorization code (its SHA-256), naming its login
	kindFamily = "family" // the tokens of one consent: the refresh token's rotation and revocation
)

// login is an authorization request in progress (op.AuthRequest): what
// the client asked for, and once the person consented, who they are.
type login struct {
	ID           string               `json:"id"`
	ClientID     string               `json:"client"`
	RedirectURI  string               `json:"redirect"`
	State        string               `json:"state,omitempty"`
	Nonce        string               `json:"nonce,omitempty"`
	Scopes       []string             `json:"scopes"`
	ResponseType oidc.ResponseType    `json:"responseType"`
	ResponseMode oidc.ResponseMode    `json:"responseMode,omitempty"`
	Challenge    *oidc.CodeChallenge  `json:"challenge,omitempty"`
	Resource     string               `json:"resource"`
	Created      time.Time            `json:"created"`
	Principal    string               `json:"principal,omitempty"`
	AuthTime     time.Time            `json:"authTime,omitzero"`
	Person       elicitation.Identity `json:"person,omitzero"`
	Consented    bool                 `json:"consented,omitempty"`
	version      int64
	// code is the hash of the code this login was redeemed with, and
	// codeVersion its record's version once marked redeemed: the family
	// issued is linked to it (storage.link).
	code        string
	codeVersion int64
}

func (l *login) GetID() string                         { return l.ID }
func (l *login) GetACR() string                        { return "" }
func (l *login) GetAMR() []string                      { return nil }
func (l *login) GetAudience() []string                 { return []string{l.Resource} }
func (l *login) GetAuthTime() time.Time                { return l.AuthTime }
func (l *login) GetClientID() string                   { return l.ClientID }
func (l *login) GetCodeChallenge() *oidc.CodeChallenge { return l.Challenge }
func (l *login) GetNonce() string                      { return l.Nonce }
func (l *login) GetRedirectURI() string                { return l.RedirectURI }
func (l *login) GetResponseType() oidc.ResponseType    { return l.ResponseType }
func (l *login) GetResponseMode() oidc.ResponseMode    { return l.ResponseMode }
func (l *login) GetScopes() []string                   { return l.Scopes }
func (l *login) GetState() string                      { return l.State }
func (l *login) GetSubject() string                    { return l.Principal }
func (l *login) Done() bool                            { return l.Consented }

// family is the tokens of one consent: every access token's id names it,
// the refresh token is its id and a secret whose hash it keeps, rotated
// on every use. A refresh token used twice (the old one after a rotation)
// revokes the family: the one who presented it, or whoever it was stolen
// from, must sign in again.
type family struct {
	ID         string               `json:"id"`
	ClientID   string               `json:"client"`
	Principal  string               `json:"principal"`
	Person     elicitation.Identity `json:"person"`
	Scopes     []string             `json:"scopes"`
	Resource   string               `json:"resource"`
	AuthTime   time.Time            `json:"authTime"`
	SecretHash string               `json:"secret,omitempty"`
	Revoked    bool                 `json:"revoked,omitempty"`
	Expires    time.Time            `json:"expires"`
	version    int64
}

func (f *family) GetAMR() []string                 { return nil }
func (f *family) GetAudience() []string            { return []string{f.Resource} }
func (f *family) GetAuthTime() time.Time           { return f.AuthTime }
func (f *family) GetClientID() string              { return f.ClientID }
func (f *family) GetScopes() []string              { return f.Scopes }
func (f *family) GetSubject() string               { return f.Principal }
func (f *family) SetCurrentScopes(scopes []string) { f.Scopes = scopes }

// code is an authorization code's record, kept under the code's hash.
// Redeemed, it stays as long as the tokens issued from it, naming their
// family and the code's PKCE challenge, so that a replay presenting the
// verifier revokes them (OAuth 2.1 section 4.1.3); Replayed marks such a
// replay that came before the family was linked, which the redemption
// then refuses.
type code struct {
	Login     string `json:"login"`
	Redeemed  bool   `json:"redeemed,omitempty"`
	Challenge string `json:"challenge,omitempty"`
	Family    string `json:"family,omitempty"`
	Replayed  bool   `json:"replayed,omitempty"`
}

// newID returns 32 random bytes in base64url: ids and secrets alike.
func newID() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

func hash(secret string) string {
	h := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(h[:])
}

func sameHash(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }

// splitToken splits "<family>.<secret>" (a refresh token) or
// "<family>.<nonce>" (an access token's id).
func splitToken(t string) (fam, rest string, ok bool) {
	fam, rest, ok = strings.Cut(t, ".")
	return fam, rest, ok && fam != "" && rest != "" && len(t) <= 200
}

// get reads the record of kind and id into v, returning its version.
func get(ctx context.Context, s grant.Store, kind, id string, v any) (int64, error) {
	r, err := s.Get(ctx, kind, id)
	if err != nil {
		return 0, err
	}
	if err := json.Unmarshal(r.Data, v); err != nil {
		return 0, fmt.Errorf("decode the %s record: %w", kind, err)
	}
	return r.Version, nil
}

// put writes v as the record of kind and id over version.
func put(ctx context.Context, s grant.Store, kind, id string, v any, expires time.Time, version int64) (int64, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return 0, fmt.Errorf("encode the %s record: %w", kind, err)
	}
	r, err := s.Put(ctx, grant.Record{Kind: kind, ID: id, Data: b, Expires: expires, Version: version})
	if err != nil {
		return 0, fmt.Errorf("write the %s record: %w", kind, err)
	}
	return r.Version, nil
}

// absent is whether err means the record is not there (or no longer,
// or another writer got there first): the caller's token or code is
// invalid, not the server broken.
func absent(err error) bool {
	return errors.Is(err, grant.ErrNotFound) || errors.Is(err, grant.ErrConflict)
}
