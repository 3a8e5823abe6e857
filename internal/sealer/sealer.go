// Package sealer is the product's one primitive for values it hands out
// and takes back: a keyring whose keys carry ids (the first current, any
// of them accepted, so that secrets rotate), read from text by the one
// keyring parser (ParseKeys), and two operations over it:
//
//   - Seal/Open: AES-256-GCM, so that only holders of the keys can read or
//     alter the value, with a purpose bound as additional data so that a
//     value sealed for one use cannot be replayed as another. A sealed
//     value looks like "s1.<kid>.<nonce+ciphertext>" (base64url, no
//     padding). The MCP tools seal the request state of a sessionless push
//     and the review link kept for it, reviewer sign-in each sign-in in
//     progress.
//   - Sign/Verify: HMAC-SHA256, for values that only have to be
//     unforgeable and keep a wire format already issued:
//     "<version>.<kid>.<payload>.<mac>" (internal/pagetoken's page tokens,
//     "v1"; reviewer sign-in's session cookie, "c1", under derived keys).
//
// Derive makes the keys of another use from a keyring's, so that one
// operator secret serves several uses without one use's key being another's.
package sealer

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// ErrInvalid: the value is malformed, sealed with an unknown key or for
// another purpose, or altered.
var ErrInvalid = errors.New("sealed value is not valid")

// MinSecretBytes is the shortest secret a key may have.
const MinSecretBytes = 32

// Key is one secret of a keyring and its id.
type Key struct {
	ID     string
	Secret []byte
}

// InitialKeyID is the id of a bare secret: the value an operator (or
// Secrets Manager, when a stack is created) generates before any rotation.
const InitialKeyID = "k0"

// ParseKeys is the one reader of keyring text, for every keyring of the
// product (page tokens, sign-in cookies, push state, the proxy's request
// state): "kid:base64secret[,kid:base64secret…]", the first key current;
// secrets in standard or URL base64, padded or not. Spaces around the
// parts are ignored. A bare secret (no ':' or ',') is the key
// InitialKeyID, so that "k1:NEW,k0:<the old bare value>" rotates it.
// CheckKeys says what a key must be.
func ParseKeys(text string) ([]Key, error) {
	text = strings.TrimSpace(text)
	if text != "" && !strings.ContainsAny(text, ":,") {
		text = InitialKeyID + ":" + text
	}
	var keys []Key
	for i, part := range strings.Split(text, ",") {
		id, b64, ok := strings.Cut(strings.TrimSpace(part), ":")
		if !ok {
			return nil, fmt.Errorf("key %d: want kid:base64secret", i+1)
		}
		id = strings.TrimSpace(id)
		secret, err := decode(strings.TrimSpace(b64))
		if err != nil {
			return nil, fmt.Errorf("key %q: the secret is not base64", id)
		}
		keys = append(keys, Key{ID: id, Secret: secret})
	}
	return keys, CheckKeys(keys)
}

// CheckKeys refuses an empty keyring, and a key whose id is empty, holds
// '.', ',', ':' or a space, or appears twice, or whose secret is shorter
// than MinSecretBytes.
func CheckKeys(keys []Key) error {
	if len(keys) == 0 {
		return errors.New("a keyring needs at least one key")
	}
	seen := map[string]bool{}
	for _, k := range keys {
		if k.ID == "" || strings.ContainsAny(k.ID, ".,: \t") {
			return fmt.Errorf("key id %q must be non-empty, without '.', ',', ':' or spaces", k.ID)
		}
		if len(k.Secret) < MinSecretBytes {
			return fmt.Errorf("the secret of key %q is %d bytes; at least %d are needed", k.ID, len(k.Secret), MinSecretBytes)
		}
		if seen[k.ID] {
			return fmt.Errorf("key id %q appears twice", k.ID)
		}
		seen[k.ID] = true
	}
	return nil
}

// Keyring seals with its first key and opens with any. It is safe for
// concurrent use.
type Keyring struct {
	current string
	ids     []string // the current first, then in the order given
	aeads   map[string]cipher.AEAD
	secrets map[string][]byte // for Sign, Verify and Derive
}

// ParseKeyring reads keyring text (ParseKeys) into a Keyring.
func ParseKeyring(text string) (*Keyring, error) {
	keys, err := ParseKeys(text)
	if err != nil {
		return nil, fmt.Errorf("sealer: %w", err)
	}
	return NewKeyring(keys...)
}

// NewKeyring returns a keyring over keys (CheckKeys), the first current.
func NewKeyring(keys ...Key) (*Keyring, error) {
	if err := CheckKeys(keys); err != nil {
		return nil, fmt.Errorf("sealer: %w", err)
	}
	k := &Keyring{current: keys[0].ID, aeads: map[string]cipher.AEAD{}, secrets: map[string][]byte{}}
	for _, key := range keys {
		k.ids = append(k.ids, key.ID)
		k.secrets[key.ID] = append([]byte(nil), key.Secret...)
		// The key is derived, so that a secret shared with another use
		// (an operator's single secret) never serves as an AES key as is.
		sum := sha256.Sum256(append([]byte("elicitation sealer v1\x00"), key.Secret...))
		block, err := aes.NewCipher(sum[:])
		if err != nil {
			return nil, err
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, err
		}
		k.aeads[key.ID] = aead
	}
	return k, nil
}

func decode(s string) ([]byte, error) {
	s = strings.TrimRight(s, "=")
	if b, err := base64.RawStdEncoding.DecodeString(s); err == nil {
		return b, nil
	}
	return base64.RawURLEncoding.DecodeString(s)
}

// Seal returns plaintext sealed for purpose under the current key.
func (k *Keyring) Seal(purpose string, plaintext []byte) string {
	aead := k.aeads[k.current]
	nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(plaintext)+aead.Overhead())
	_, _ = rand.Read(nonce) // crypto/rand.Read never fails (Go 1.24+)
	out := aead.Seal(nonce, nonce, plaintext, []byte(purpose))
	return "s1." + k.current + "." + base64.RawURLEncoding.EncodeToString(out)
}

// Open returns the plaintext of a value sealed for purpose with any key of
// the keyring, or ErrInvalid.
func (k *Keyring) Open(purpose, sealed string) ([]byte, error) {
	parts := strings.Split(sealed, ".")
	if len(parts) != 3 || parts[0] != "s1" {
		return nil, ErrInvalid
	}
	aead, ok := k.aeads[parts[1]]
	if !ok {
		return nil, fmt.Errorf("%w: unknown key %q", ErrInvalid, parts[1])
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil || len(b) < aead.NonceSize()+aead.Overhead() {
		return nil, ErrInvalid
	}
	plain, err := aead.Open(nil, b[:aead.NonceSize()], b[aead.NonceSize():], []byte(purpose))
	if err != nil {
		return nil, ErrInvalid
	}
	return plain, nil
}

// CurrentKeyID is the id of the key new values are sealed and signed with.
func (k *Keyring) CurrentKeyID() string { return k.current }

// Derive returns the keyring's keys, the current one first, each with its
// secret replaced by HMAC-SHA256(secret, purpose): keys for another use
// that rotate with this keyring without sharing its secrets.
func (k *Keyring) Derive(purpose string) []Key {
	out := make([]Key, len(k.ids))
	for i, id := range k.ids {
		m := hmac.New(sha256.New, k.secrets[id])
		m.Write([]byte(purpose))
		out[i] = Key{ID: id, Secret: m.Sum(nil)}
	}
	return out
}

// Sign returns "<version>.<kid>.<payload>.<mac>": payload in base64url and
// its HMAC-SHA256 under the current key, over everything before the last
// dot. It is deterministic: the same payload gives the same value.
func (k *Keyring) Sign(version string, payload []byte) string {
	head := version + "." + k.current + "." + base64.RawURLEncoding.EncodeToString(payload)
	return head + "." + base64.RawURLEncoding.EncodeToString(mac(k.secrets[k.current], head))
}

// Verify checks a value of Sign of this version under the key it names and
// returns its payload, or ErrInvalid (malformed, longer than maxLen, an
// unknown key, a MAC that does not match).
func (k *Keyring) Verify(version, signed string, maxLen int) ([]byte, error) {
	if len(signed) > maxLen {
		return nil, ErrInvalid
	}
	parts := strings.Split(signed, ".")
	if len(parts) != 4 || parts[0] != version {
		return nil, ErrInvalid
	}
	secret, ok := k.secrets[parts[1]]
	if !ok {
		return nil, ErrInvalid
	}
	sum, err := base64.RawURLEncoding.DecodeString(parts[3])
	if err != nil || !hmac.Equal(sum, mac(secret, strings.Join(parts[:3], "."))) {
		return nil, ErrInvalid
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return nil, ErrInvalid
	}
	return payload, nil
}

func mac(secret []byte, head string) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(head))
	return m.Sum(nil)
}

// GenerateSecret returns a fresh random secret of MinSecretBytes,
// base64-encoded (as ParseKeys reads it).
func GenerateSecret() string {
	b := make([]byte, MinSecretBytes)
	_, _ = rand.Read(b) // never fails (Go 1.24+)
	return base64.StdEncoding.EncodeToString(b)
}
