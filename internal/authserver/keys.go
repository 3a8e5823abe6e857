package authserver

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hkdf"
	"crypto/sha256"
	"errors"
	"fmt"

	"github.com/go-jose/go-jose/v4"

	"github.com/mcp-elicitation/elicitation/internal/sealer"
)

// KeyPurpose is what the signing keys are derived for from the
// deployment's page-token keyring (pagetoken.Keyring.Derive): every
// function that holds the keyring (Secrets Manager on AWS) derives the
// same keys, and a rotation of the keyring rotates them, the previous key
// still verifying until the tokens it signed expire.
const KeyPurpose = "elicitation oauth signing v1"

// signingKey is one ES256 key, derived from one key of the keyring.
type signingKey struct {
	id   string
	priv *ecdsa.PrivateKey
}

func (k signingKey) SignatureAlgorithm() jose.SignatureAlgorithm { return jose.ES256 }
func (k signingKey) Algorithm() jose.SignatureAlgorithm          { return jose.ES256 }
func (k signingKey) Use() string                                 { return "sig" }
func (k signingKey) ID() string                                  { return k.id }

// Key is the private key for signing (op.SigningKey) and the public one
// for the key set (op.Key): op asks each interface for Key.
func (k signingKey) Key() any { return k.priv }

func (k signingKey) public() crypto.PublicKey { return &k.priv.PublicKey }

// deriveKeys returns an ES256 key for each of keys, the first current.
// The private scalar is HKDF-SHA256 of the key's secret; a value outside
// the curve's order (probability about 2^-32) is derived again with a
// counter.
func deriveKeys(keys []sealer.Key) ([]signingKey, error) {
	if len(keys) == 0 {
		return nil, errors.New("no keys to derive the signing keys from")
	}
	out := make([]signingKey, 0, len(keys))
	for _, k := range keys {
		priv, err := derive(k.Secret)
		if err != nil {
			return nil, fmt.Errorf("derive the signing key of %s: %w", k.ID, err)
		}
		out = append(out, signingKey{id: "oauth-" + k.ID, priv: priv})
	}
	return out, nil
}

func derive(secret []byte) (*ecdsa.PrivateKey, error) {
	for i := range 8 {
		d, err := hkdf.Key(sha256.New, secret, nil, fmt.Sprintf("%s %d", KeyPurpose, i), 32)
		if err != nil {
			return nil, err
		}
		if priv, err := ecdsa.ParseRawPrivateKey(elliptic.P256(), d); err == nil {
			return priv, nil
		}
	}
	return nil, errors.New("no valid P-256 scalar in 8 derivations")
}
