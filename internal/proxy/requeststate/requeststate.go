// Package requeststate seals the state the proxy hands a 2026-07-28 client
// in a multi round-trip result, and opens it again when the client retries.
//
// The client echoes the state back and may tamper with it, so it is signed
// with HMAC-SHA256 and carries an expiry. The state is signed, not encrypted:
// it must hold nothing secret.
package requeststate

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// MinKeyLen is the shortest key NewSealer accepts.
const MinKeyLen = 32

// ErrInvalid is returned for a state that is malformed, forged or expired.
var ErrInvalid = errors.New("invalid request state")

// Sealer signs and verifies request states.
type Sealer struct {
	key []byte
	// Now returns the current time; tests may replace it.
	Now func() time.Time
}

// NewSealer returns a sealer for key, which must be at least MinKeyLen bytes.
func NewSealer(key []byte) (*Sealer, error) {
	if len(key) < MinKeyLen {
		return nil, fmt.Errorf("request state key: %d bytes, need at least %d", len(key), MinKeyLen)
	}
	return &Sealer{key: append([]byte(nil), key...), Now: time.Now}, nil
}

// NewRandomSealer returns a sealer with a key random to this process: states
// it seals cannot be opened by another process.
func NewRandomSealer() *Sealer {
	key := make([]byte, MinKeyLen)
	rand.Read(key) // never fails
	s, _ := NewSealer(key)
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
	p := base64.RawURLEncoding.EncodeToString(payload)
	return p + "." + base64.RawURLEncoding.EncodeToString(s.mac(p)), nil
}

// Open verifies token and decodes its value into v. Every failure wraps
// ErrInvalid.
func (s *Sealer) Open(token string, v any) error {
	p, sig, ok := strings.Cut(token, ".")
	if !ok {
		return fmt.Errorf("%w: malformed", ErrInvalid)
	}
	got, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil || !hmac.Equal(got, s.mac(p)) {
		return fmt.Errorf("%w: bad signature", ErrInvalid)
	}
	payload, err := base64.RawURLEncoding.DecodeString(p)
	if err != nil {
		return fmt.Errorf("%w: malformed", ErrInvalid)
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

func (s *Sealer) mac(payload string) []byte {
	h := hmac.New(sha256.New, s.key)
	h.Write([]byte(payload))
	return h.Sum(nil)
}
