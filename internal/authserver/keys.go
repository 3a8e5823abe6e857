package authserver

import (
	"github.com/go-jose/go-jose/v4"

	"github.com/mcp-elicitation/elicitation/internal/signing"
)

// signingKey is a key of the deployment's signing keyring as op sees it:
// op.SigningKey (the private key) and, through publicKey, op.Key.
type signingKey struct{ k signing.Key }

func (k signingKey) SignatureAlgorithm() jose.SignatureAlgorithm { return jose.ES256 }
func (k signingKey) Algorithm() jose.SignatureAlgorithm          { return jose.ES256 }
func (k signingKey) Use() string                                 { return "sig" }
func (k signingKey) ID() string                                  { return k.k.ID }
func (k signingKey) Key() any                                    { return k.k.Private }

// publicKey is a signing key as the key set shows it: its public half.
type publicKey struct{ signingKey }

func (k publicKey) Key() any { return k.k.Public() }
