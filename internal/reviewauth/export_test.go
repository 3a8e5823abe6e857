package reviewauth

import (
	"golang.org/x/oauth2"
)

// Reseal seals a sign-in cookie value of state again under a's keys with
// another PKCE verifier (a test of the issuer's PKCE check).
func Reseal(a *Auth, state, v string) (string, error) {
	c, err := a.openLogin(state, v)
	if err != nil {
		return "", err
	}
	c.Verifier = oauth2.GenerateVerifier()
	return a.sealLogin(state, c)
}
