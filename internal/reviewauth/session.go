package reviewauth

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/sealer"
)

// The session cookie (CookieName) holds a signed-in session (kindSession:
// who the identity provider said the reviewer is), signed with HMAC-SHA256:
// nothing in it is hidden from the reviewer whose browser holds it (their
// own address and groups), and it only has to be unforgeable. A sign-in in
// progress is elsewhere: one sealed cookie per sign-in (loginCookie).
const (
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
}

// maxCookieBytes bounds the cookie (browsers keep about 4 KB per cookie).
const maxCookieBytes = 3800

var errBadCookie = errors.New("reviewauth: the cookie is not valid")

// signer signs and opens session cookie values with HMAC-SHA256 under a
// keyring (the first key signs; any opens): internal/sealer's Sign and
// Verify, in the format "c1.<kid>.<payload>.<mac>" sessions were issued in.
type signer struct {
	ring *sealer.Keyring
}

const cookieVersion = "c1"

func (s signer) seal(c cookieClaims) (string, error) {
	c.Expires = c.Expires.UTC()
	b, err := json.Marshal(c)
	if err != nil {
		return "", err
	}
	v := s.ring.Sign(cookieVersion, b)
	if len(v) > maxCookieBytes {
		return "", errors.New("reviewauth: the session does not fit in a cookie")
	}
	return v, nil
}

// open checks the value's signature and expiry and that it is of kind.
func (s signer) open(v, kind string, now time.Time) (cookieClaims, error) {
	b, err := s.ring.Verify(cookieVersion, v, maxCookieBytes)
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

// LoginCookiePrefix starts the name of each sign-in's own cookie: the
// prefix and the sign-in's state ("elicitation_signin_<state>"), so that
// sign-ins in two tabs of one browser each keep theirs, and a callback
// finds its own by the state the issuer sends back.
const LoginCookiePrefix = "elicitation_signin_"

// loginClaims is a sign-in in progress: the nonce and PKCE verifier of
// one authorization request, and where to return. It is sealed
// (AES-256-GCM, internal/sealer) under a purpose that names the state, so
// that the browser's holder, and whoever reads its cookies, learns nothing
// of it, and it opens only under its own cookie name.
type loginClaims struct {
	Expires  time.Time `json:"x"`
	Nonce    string    `json:"n"`
	Verifier string    `json:"v"`
	Return   string    `json:"r"`
}

const loginPurpose = "elicitation review sign-in v1\x00"

// stateChars bounds the state a callback may name before it is used in a
// cookie name: random() makes 32 base64url characters.
func validState(st string) bool {
	if len(st) != 32 {
		return false
	}
	for _, c := range st {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

func (a *Auth) sealLogin(state string, c loginClaims) (string, error) {
	c.Expires = c.Expires.UTC()
	b, err := json.Marshal(c)
	if err != nil {
		return "", err
	}
	return a.flows.Seal(loginPurpose+state, b), nil
}

func (a *Auth) openLogin(state, v string) (loginClaims, error) {
	if len(v) > maxCookieBytes {
		return loginClaims{}, errBadCookie
	}
	b, err := a.flows.Open(loginPurpose+state, v)
	if err != nil {
		return loginClaims{}, errBadCookie
	}
	var c loginClaims
	if err := json.Unmarshal(b, &c); err != nil || c.Verifier == "" || c.Nonce == "" {
		return loginClaims{}, errBadCookie
	}
	if !a.cfg.Now().Before(c.Expires) {
		return c, errExpired
	}
	return c, nil
}
