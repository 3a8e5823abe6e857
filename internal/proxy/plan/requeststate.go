// The sealed request state: the state the proxy hands a 2026-07-28 client
// in a multi round-trip result, opened again when the client retries.
//
// The client echoes the state back and may tamper with it, so it is sealed
// (AES-256-GCM, the product's one primitive, internal/sealer) for the
// purpose "proxy request state" (statePurpose) and carries an expiry: the client can
// neither read nor alter it. A state looks like "s1.<kid>.<sealed>".

package plan

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/sealer"
)

// MinStateKeyLen is the shortest key ParseStateKey accepts.
const MinStateKeyLen = sealer.MinSecretBytes

// ErrInvalidState is returned for a state that is malformed, forged or expired.
var ErrInvalidState = errors.New("invalid request state")

// stateKeyID names a key given as a bare secret, as sealer.ParseKeys
// names a bare base64 secret.
const stateKeyID = sealer.InitialKeyID

const statePurpose = "proxy request state v2"

// Sealer seals and opens request states.
type Sealer struct {
	ring *sealer.Keyring
	// Now returns the current time; tests may replace it.
	Now func() time.Time
}

// ParseStateKey returns a sealer for the text of MCP_ELICITATION_PROXY_STATE_KEY:
// a bare base64 secret of at least MinStateKeyLen bytes, or keyring text
// "kid:base64secret[,…]" (the product's one keyring parser,
// sealer.ParseKeys), the first key sealing and every key opening, so that
// the key rotates. A bare secret is the key "k0" ("k1:NEW,k0:OLD" rotates
// it).
func ParseStateKey(text string) (*Sealer, error) {
	keys, err := sealer.ParseKeys(text)
	if err != nil {
		return nil, fmt.Errorf("request state key: %w", err)
	}
	return newStateSealer(keys)
}

func newStateSealer(keys []sealer.Key) (*Sealer, error) {
	ring, err := sealer.NewKeyring(keys...)
	if err != nil {
		return nil, fmt.Errorf("request state key: %w", errors.Unwrap(err))
	}
	return &Sealer{ring: ring, Now: time.Now}, nil
}

// NewRandomSealer returns a sealer with a key random to this process: states
// it seals cannot be opened by another process.
func NewRandomSealer() *Sealer {
	s, _ := ParseStateKey(sealer.GenerateSecret())
	return s
}

type stateEnvelope struct {
	Exp  int64           `json:"exp"`
	Data json.RawMessage `json:"data"`
}

// Seal returns a URL-safe token holding v, valid for ttl.
func (s *Sealer) Seal(v any, ttl time.Duration) (string, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("sealing request state: %w", err)
	}
	payload, err := json.Marshal(stateEnvelope{Exp: s.Now().Add(ttl).Unix(), Data: data})
	if err != nil {
		return "", fmt.Errorf("sealing request state: %w", err)
	}
	return s.ring.Seal(statePurpose, payload), nil
}

// Open checks token and decodes its value into v. Every failure wraps
// ErrInvalidState. A state sealed before the proxy used the one primitive
// (signed "<payload>.<mac>") is refused like any other invalid state: it
// lived 30 minutes at most, and the gate then asks again.
func (s *Sealer) Open(token string, v any) error {
	payload, err := s.ring.Open(statePurpose, token)
	if err != nil {
		return fmt.Errorf("%w: malformed, forged or of another key", ErrInvalidState)
	}
	var env stateEnvelope
	if err := json.Unmarshal(payload, &env); err != nil {
		return fmt.Errorf("%w: malformed", ErrInvalidState)
	}
	if s.Now().Unix() > env.Exp {
		return fmt.Errorf("%w: expired", ErrInvalidState)
	}
	if err := json.Unmarshal(env.Data, v); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidState, err)
	}
	return nil
}
