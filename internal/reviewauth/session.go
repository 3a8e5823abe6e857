package reviewauth

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/pagetoken"
)

// The one cookie the product sets holds either a sign-in in progress
// (kindLogin: the state, nonce and PKCE verifier of one authorization
// request, and where to return) or a signed-in session (kindSession: who
// the identity provider said the reviewer is). It is signed, never
// encrypted: nothing in it is a credential another party could use (the
// verifier is useless without the code, which only the provider's redirect
// to this browser carries).
const (
	kindLogin   = "l"
	kindSession = "s"
)

// cookieClaims is the cookie's signed payload.
type cookieClaims struct {
	Kind    string    `json:"k"`
	Expires time.Time `json:"x"`

	// A session: bound to the issuer and the subject.
	Issuer        string    `json:"iss,omitempty"`
	Subject       string    `json:"sub,omitempty"`
	Email         string    `json:"em,omitempty"`
	EmailVerified bool      `json:"ev,omitempty"`
	Groups        []string  `json:"g,omitempty"`
	IssuedAt      time.Time `json:"iat,omitzero"`

	// A sign-in in progress.
	State    string `json:"st,omitempty"`
	Nonce    string `json:"n,omitempty"`
	Verifier string `json:"v,omitempty"`
	Return   string `json:"r,omitempty"`
}

// maxCookieBytes bounds the cookie (browsers keep about 4 KB per cookie).
const maxCookieBytes = 3800

var errBadCookie = errors.New("reviewauth: the cookie is not valid")

// sealer signs and opens cookie values with HMAC-SHA256 under a keyring
// (the first key signs; any opens), like the page tokens.
type sealer struct {
	keys []pagetoken.Key
}

const cookieVersion = "c1"

func (s sealer) seal(c cookieClaims) (string, error) {
	c.Expires = c.Expires.UTC()
	b, err := json.Marshal(c)
	if err != nil {
		return "", err
	}
	k := s.keys[0]
	head := cookieVersion + "." + k.ID + "." + base64.RawURLEncoding.EncodeToString(b)
	v := head + "." + base64.RawURLEncoding.EncodeToString(sign(k.Secret, head))
	if len(v) > maxCookieBytes {
		return "", errors.New("reviewauth: the session does not fit in a cookie")
	}
	return v, nil
}

func sign(secret []byte, head string) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(head))
	return m.Sum(nil)
}

// open checks the value's signature and expiry and that it is of kind.
func (s sealer) open(v, kind string, now time.Time) (cookieClaims, error) {
	if len(v) > maxCookieBytes {
		return cookieClaims{}, errBadCookie
	}
	parts := strings.Split(v, ".")
	if len(parts) != 4 || parts[0] != cookieVersion {
		return cookieClaims{}, errBadCookie
	}
	var secret []byte
	for _, k := range s.keys {
		if k.ID == parts[1] {
			secret = k.Secret
		}
	}
	sum, err := base64.RawURLEncoding.DecodeString(parts[3])
	if secret == nil || err != nil || !hmac.Equal(sum, sign(secret, strings.Join(parts[:3], "."))) {
		return cookieClaims{}, errBadCookie
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return cookieClaims{}, errBadCookie
	}
	var c cookieClaims
	if err := json.Unmarshal(b, &c); err != nil || c.Kind != kind {
		return cookieClaims{}, errBadCookie
	}
	if !now.Before(c.Expires) {
		return c, errExpired
	}
	return c, nil
}

var errExpired = errors.New("reviewauth: the cookie expired")
