package authserver

import (
	"encoding/json"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// Resign returns token with its claims changed by edit, signed again
// with s's current key: what only the server could mint.
func Resign(s *Server, token string, edit func(claims map[string]any)) (string, error) {
	jws, err := jose.ParseSignedCompact(token, []jose.SignatureAlgorithm{jose.ES256})
	if err != nil {
		return "", err
	}
	var claims map[string]any
	if err := json.Unmarshal(jws.UnsafePayloadWithoutVerification(), &claims); err != nil {
		return "", err
	}
	edit(claims)
	b, _ := json.Marshal(claims)
	k := s.keys[0]
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: k.k.Private}, (&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", k.k.ID))
	if err != nil {
		return "", err
	}
	out, err := signer.Sign(b)
	if err != nil {
		return "", err
	}
	return out.CompactSerialize()
}

// Epoch is t as a JWT NumericDate.
func Epoch(t time.Time) float64 { return float64(t.Unix()) }

// ForgetTokens empties s's cache of verified tokens.
func ForgetTokens(s *Server) {
	s.mu.Lock()
	clear(s.tokens)
	s.mu.Unlock()
}
