// Package pagetoken seals and opens the per-render tokens of the review
// page: the elicitation id, a random render id, an expiry and the
// signed-in reviewer, signed with HMAC-SHA256 by the product's one
// primitive (internal/sealer's Sign and Verify) under a keyring whose keys
// carry ids so that secrets can rotate (seal with the current key, open
// with any known key).
//
// A token looks like "v1.<kid>.<payload>.<mac>" (base64url, no padding).
// It is not encrypted: nothing in it is secret, it only has to be
// unforgeable.
package pagetoken

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/sealer"
)

// MinSecretBytes is the shortest secret a Key may have.
const MinSecretBytes = sealer.MinSecretBytes

// Errors returned (wrapped) by Open. Match them with errors.Is.
var (
	// ErrInvalid: the token is malformed, signed with an unknown key, or
	// its MAC does not match (forged or altered).
	ErrInvalid = errors.New("page token is not valid")
	// ErrExpired: the token is authentic but past its expiry. Open returns
	// its claims with this error.
	ErrExpired = errors.New("page token expired")
)

// Key is one secret of a keyring and its id (the one key type of every
// keyring, internal/sealer's).
type Key = sealer.Key

// Claims is what a token binds.
type Claims struct {
	// ElicitationID is the request the page was rendered for.
	ElicitationID string `json:"e"`
	// RenderID names the render; the review page uses it as the submission
	// id, so a retried POST of the same render is recognised.
	RenderID string `json:"r"`
	// Expires is when the token stops being accepted.
	Expires time.Time `json:"x"`
	// RequestExpires is the request's expiresAt when the page was rendered.
	RequestExpires time.Time `json:"rx,omitzero"`
	// Reviewer binds the token to the signed-in reviewer the page was
	// rendered for (internal/review derives it from the identity); empty
	// without sign-in.
	Reviewer string `json:"rv,omitempty"`
}

// Keyring seals with its first key and opens with any of its keys. It is
// safe for concurrent use.
type Keyring struct {
	ring *sealer.Keyring
}

// NewKeyring returns a keyring over keys; the first key is the current one.
// Keys must pass sealer.CheckKeys (ids non-empty, unique and free of '.',
// ',', ':' and spaces; secrets at least MinSecretBytes long).
func NewKeyring(keys ...Key) (*Keyring, error) {
	ring, err := sealer.NewKeyring(keys...)
	if err != nil {
		return nil, fmt.Errorf("pagetoken: %w", err)
	}
	return &Keyring{ring: ring}, nil
}

// Derive returns the keyring's keys, the current one first, each with its
// secret replaced by HMAC-SHA256(secret, purpose): keys for another signer
// (the reviewer's sign-in session) that rotate with this keyring without
// sharing its secrets.
func (k *Keyring) Derive(purpose string) []Key { return k.ring.Derive(purpose) }

// ParseKeyring reads a keyring from configuration text such as
// "kid1:BASE64SECRET,kid0:BASE64OLDSECRET" with the product's one keyring
// parser (sealer.ParseKeys): comma-separated id:secret pairs, the first one
// current, secrets in base64 (standard or URL alphabet, padded or not).
func ParseKeyring(config string) (*Keyring, error) {
	keys, err := sealer.ParseKeys(config)
	if err != nil {
		return nil, fmt.Errorf("pagetoken: %w", err)
	}
	return NewKeyring(keys...)
}

// GenerateSecret returns a fresh random 32-byte secret, base64-encoded (as
// ParseKeyring reads it).
func GenerateSecret() string { return sealer.GenerateSecret() }

// NewRenderID returns a fresh random render id (128 bits, URL-safe).
func NewRenderID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// CurrentKeyID is the id of the key new tokens are sealed with.
func (k *Keyring) CurrentKeyID() string { return k.ring.CurrentKeyID() }

const version = "v1"

// Seal signs c with the current key.
func (k *Keyring) Seal(c Claims) (string, error) {
	if c.ElicitationID == "" || c.RenderID == "" || c.Expires.IsZero() {
		return "", errors.New("pagetoken: claims need an elicitation id, a render id and an expiry")
	}
	c.Expires = c.Expires.UTC()
	c.RequestExpires = c.RequestExpires.UTC()
	payload, err := json.Marshal(c)
	if err != nil {
		return "", fmt.Errorf("pagetoken: encode claims: %w", err)
	}
	return k.ring.Sign(version, payload), nil
}

// maxTokenBytes bounds what Open will look at.
const maxTokenBytes = 1024

// Open checks token's MAC under the key it names and returns its claims.
// A malformed, unknown-key or forged token gives ErrInvalid; an authentic
// token at or after its expiry gives its claims and ErrExpired.
func (k *Keyring) Open(token string, now time.Time) (Claims, error) {
	payload, err := k.ring.Verify(version, token, maxTokenBytes)
	if err != nil {
		return Claims{}, ErrInvalid
	}
	var c Claims
	if err := json.Unmarshal(payload, &c); err != nil || c.ElicitationID == "" || c.RenderID == "" {
		return Claims{}, ErrInvalid
	}
	if !now.Before(c.Expires) {
		return c, ErrExpired
	}
	return c, nil
}
