package reviewauth

import (
	"time"

	"golang.org/x/oauth2"
)

// Reseal re-signs a sign-in-in-progress cookie value with keys, replacing
// its PKCE verifier (a test of the issuer's PKCE check).
func Reseal(v string, keys sealer, now time.Time) (string, error) {
	c, err := keys.open(v, kindLogin, now)
	if err != nil {
		return "", err
	}
	c.Verifier = oauth2.GenerateVerifier()
	return keys.seal(c)
}

// SealerOf is the sealer of a.
func SealerOf(a *Auth) sealer { return a.seal }
