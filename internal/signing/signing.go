// Package signing is the deployment's one asymmetric signing keyring:
// ES256 keys derived from the page-token keyring, so that every function
// holding that keyring (Secrets Manager on AWS) derives the same keys, and
// a rotation of the keyring rotates them while the previous key still
// verifies what it signed until that expires. OAuth access tokens
// (internal/authserver) are signed with it; anyone verifies with the key
// set (JWKS) it publishes.
package signing

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hkdf"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/go-jose/go-jose/v4"

	"github.com/mcp-elicitation/elicitation/internal/sealer"
)

// Purpose is what the keys are derived for from the page-token keyring
// (pagetoken.Keyring.Derive(Purpose)).
const Purpose = "elicitation signing v1"

// Key is one ES256 key; its ID is the JWS "kid".
type Key struct {
	ID      string
	Private *ecdsa.PrivateKey
}

// Public is the key's public half.
func (k Key) Public() *ecdsa.PublicKey { return &k.Private.PublicKey }

// Derive returns an ES256 key for each of keys (the keyring's keys
// derived for Purpose), the first current. The private scalar is
// HKDF-SHA256 of the key's secret; a value outside the curve's order
// (probability about 2^-32) is derived again with a counter.
func Derive(keys []sealer.Key) ([]Key, error) {
	if len(keys) == 0 {
		return nil, errors.New("no keys to derive the signing keys from")
	}
	out := make([]Key, 0, len(keys))
	for _, k := range keys {
		priv, err := derive(k.Secret)
		if err != nil {
			return nil, fmt.Errorf("derive the signing key of %s: %w", k.ID, err)
		}
		out = append(out, Key{ID: "es256-" + k.ID, Private: priv})
	}
	return out, nil
}

func derive(secret []byte) (*ecdsa.PrivateKey, error) {
	for i := range 8 {
		d, err := hkdf.Key(sha256.New, secret, nil, fmt.Sprintf("%s %d", Purpose, i), 32)
		if err != nil {
			return nil, err
		}
		if priv, err := ecdsa.ParseRawPrivateKey(elliptic.P256(), d); err == nil {
			return priv, nil
		}
	}
	return nil, errors.New("no valid P-256 scalar in 8 derivations")
}

// JWKS is the public key set of keys (RFC 7517).
func JWKS(keys []Key) jose.JSONWebKeySet {
	var set jose.JSONWebKeySet
	for _, k := range keys {
		set.Keys = append(set.Keys, jose.JSONWebKey{Key: k.Public(), KeyID: k.ID, Algorithm: string(jose.ES256), Use: "sig"})
	}
	return set
}

// JWKSPath is where a deployment publishes its key set.
const JWKSPath = "/.well-known/jwks.json"

// Handler serves the key set of keys, cacheable for five minutes, to any
// origin.
func Handler(keys []Key) http.Handler {
	b, err := json.Marshal(JWKS(keys))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err != nil {
			http.Error(w, "key set unavailable", http.StatusInternalServerError)
			return
		}
		h := w.Header()
		h.Set("Content-Type", "application/jwk-set+json")
		h.Set("Cache-Control", "public, max-age=300")
		h.Set("Access-Control-Allow-Origin", "*")
		_, _ = w.Write(b)
	})
}
