// Package requeststate seals the state the proxy hands a 2026-07-28 client
// in a multi round-trip result, and opens it again when the client retries.
//
// The client echoes the state back and may tamper with it, so it is sealed
// (AES-256-GCM, the product's one primitive, internal/sealer) for the
// purpose "proxy request state" and carries an expiry: the client can
// neither read nor alter it. A state looks like "s1.<kid>.<sealed>".
package requeststate

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/sealer"
)

// MinKeyLen is the shortest key Parse accepts.
const MinKeyLen = sealer.MinSecretBytes

// ErrInvalid is returned for a state that is malformed, forged or expired.
var ErrInvalid = errors.New("invalid request state")

// keyID names a key given as a bare secret, as sealer.ParseKeys
// names a bare base64 secret.
const keyID = sealer.InitialKeyID

const purpose = "proxy request state v2"

// Sealer seals and opens request states.
type Sealer struct {
	ring *sealer.Keyring
	// Now returns the current time; tests may replace it.
	Now func() time.Time
}

// Parse returns a sealer for the text of MCP_ELICITATION_PROXY_STATE_KEY:
// a bare base64 secret of at least MinKeyLen bytes, or keyring text
// "kid:base64secret[,…]" (the product's one keyring parser,
// sealer.ParseKeys), the first key sealing and every key opening, so that
// the key rotates. A bare secret is the key "k0" ("k1:NEW,k0:OLD" rotates
// it).
func Parse(text string) (*Sealer, error) {
	keys, err := sealer.ParseKeys(text)
	if err != nil {
		return nil, fmt.Errorf("request state key: %w", err)
	}
	return newSealer(keys)
}

func newSealer(keys []sealer.Key) (*Sealer, error) {
	ring, err := sealer.NewKeyring(keys...)
	if err != nil {
		return nil, fmt.Errorf("request state key: %w", errors.Unwrap(err))
	}
	return &Sealer{ring: ring, Now: time.Now}, nil
}

// NewRandomSealer returns a sealer with a key random to this process: states
// it seals cannot be opened by another process.
func NewRandomSealer() *Sealer {
	s, _ := Parse(sealer.GenerateSecret())
	return s
}

type envelope struct {
	Exp  int64           `json:"exp"`
	Data json.RawMessage `json:"data"`
}

// Seal returns a URL-safe token holding v, valid for ttl.
func (s *Sealer) Seal(v any, ttl time.Duration) (string, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("sealing request state: %w", err)
	}
	payload, err := json.Marshal(envelope{Exp: s.Now().Add(ttl).Unix(), Data: data})
	if err != nil {
		return "", fmt.Errorf("sealing request state: %w", err)
	}
	return s.ring.Seal(purpose, payload), nil
}

// Open checks token and decodes its value into v. Every failure wraps
// ErrInvalid. A state sealed before the proxy used the one primitive
// (signed "<payload>.<mac>") is refused like any other invalid state: it
// lived 30 minutes at most, and the gate then asks again.
func (s *Sealer) Open(token string, v any) error {
	payload, err := s.ring.Open(purpose, token)
	if err != nil {
		return fmt.Errorf("%w: malformed, forged or of another key", ErrInvalid)
	}
	var env envelope
	if err := json.Unmarshal(payload, &env); err != nil {
		return fmt.Errorf("%w: malformed", ErrInvalid)
	}
	if s.Now().Unix() > env.Exp {
		return fmt.Errorf("%w: expired", ErrInvalid)
	}
	if err := json.Unmarshal(env.Data, v); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	return nil
}
