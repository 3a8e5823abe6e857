// Package apikey provides the API keys that agents present as bearer tokens
// to a deployed MCP endpoint: generation, hashed storage behind a small Store
// interface, verification (an http.Handler middleware on the MCP SDK's
// auth.RequireBearerToken); "elicitation keys" (cmd/elicitation) administers them.
//
// A key is shown once, when it is created. Stores keep only its SHA-256 hash
// and the principal it names; whatever an agent creates with the key belongs
// to that principal.
//
// Keys look like
//
//	elk_<52 base32 characters: 256 random bits><7 base32 characters: CRC-32>
//
// The prefix makes a leaked key recognisable to secret scanners; the checksum
// lets the verifier refuse mistyped or made-up keys without a store read.
package apikey

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"regexp"
	"strings"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// Prefix begins every key.
const Prefix = "elk_"

// Errors returned (wrapped) by Stores and the functions of this package.
var (
	// ErrNotFound: no key with that hash or id.
	ErrNotFound = errors.New("no such API key")
	// ErrConflict: a key with that hash or id exists already.
	ErrConflict = errors.New("an API key with that id exists already")
	// ErrInvalid: the presented key is malformed, unknown, revoked or expired.
	ErrInvalid = errors.New("invalid API key")
)

// Key is what a store holds about one key: never the key itself.
type Key struct {
	// ID names the key in listings and in revoke; it is the first 16 hex
	// characters of Hash, so it grants nothing.
	ID string `json:"id"`
	// Hash is the hex SHA-256 of the key.
	Hash string `json:"hash"`
	// Principal is the identity the key authenticates as.
	Principal string `json:"principal"`
	// Name is an optional note for the operator ("ci runner", "laptop").
	Name      string    `json:"name,omitempty"`
	CreatedAt time.Time `json:"createdAt"`
	// ExpiresAt is when the key stops working; zero means never.
	ExpiresAt time.Time `json:"expiresAt,omitzero"`
	// RevokedAt is when the key was revoked; zero means it is active.
	RevokedAt time.Time `json:"revokedAt,omitzero"`
}

// Active reports whether k authenticates at now.
func (k Key) Active(now time.Time) bool {
	return k.RevokedAt.IsZero() && (k.ExpiresAt.IsZero() || now.Before(k.ExpiresAt))
}

// Store persists keys by hash. Implementations: FileStore (embedded) and
// dynamokeys.Store (DynamoDB); package apikeytest is their shared contract.
type Store interface {
	// Put stores a new key. It returns ErrConflict if a key with the same
	// hash or id exists.
	Put(ctx context.Context, k Key) error
	// Lookup reads the key with the given hash. It returns ErrNotFound if
	// there is none; a revoked key is returned, with RevokedAt set.
	Lookup(ctx context.Context, hash string) (Key, error)
	// Revoke marks the key with the given id revoked at at, and returns it.
	// Revoking a revoked key keeps the first RevokedAt. It returns
	// ErrNotFound if there is no key with that id.
	Revoke(ctx context.Context, id string, at time.Time) (Key, error)
	// List returns every key, revoked ones included, oldest first.
	List(ctx context.Context) ([]Key, error)
}

var b32 = base32.StdEncoding.WithPadding(base32.NoPadding)

const (
	randomBytes = 32
	bodyLen     = 52 // base32 of 32 bytes, no padding
	sumLen      = 7  // base32 of 4 bytes, no padding
)

// Generate returns a new random key. It does not store it.
func Generate() string {
	b := make([]byte, randomBytes)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	body := strings.ToLower(b32.EncodeToString(b))
	return Prefix + body + checksum(body)
}

func checksum(body string) string {
	var sum [4]byte
	binary.BigEndian.PutUint32(sum[:], crc32.ChecksumIEEE([]byte(Prefix+body)))
	return strings.ToLower(b32.EncodeToString(sum[:]))
}

// WellFormed reports whether key has the shape Generate gives (prefix,
// length, alphabet and checksum). It says nothing about whether a store
// knows the key.
func WellFormed(key string) bool {
	if len(key) != len(Prefix)+bodyLen+sumLen || !strings.HasPrefix(key, Prefix) {
		return false
	}
	rest := key[len(Prefix):]
	for _, c := range rest {
		if (c < 'a' || c > 'z') && (c < '2' || c > '7') {
			return false
		}
	}
	return checksum(rest[:bodyLen]) == rest[bodyLen:]
}

// Hash returns the hex SHA-256 of key, the form stores keep.
func Hash(key string) string {
	h := sha256.Sum256([]byte(key))
	return hex.EncodeToString(h[:])
}

// IDOf returns the id of the key with the given hash.
func IDOf(hash string) string { return hash[:16] }

// principalPattern: principals appear in logs, audit trails and listings;
// keep them short and printable.
var principalPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._@:+-]{0,127}$`)

// CreateOptions describe a key to create.
type CreateOptions struct {
	// Principal is required: the identity the key authenticates as.
	Principal string
	// Name is an optional note, at most 200 characters.
	Name string
	// TTL, when positive, makes the key expire that long after creation.
	TTL time.Duration
	// Now is the clock; default time.Now.
	Now func() time.Time
}

// Create generates a key, stores its hash, and returns the key (to show
// once) and what was stored.
func Create(ctx context.Context, s Store, o CreateOptions) (string, Key, error) {
	if !principalPattern.MatchString(o.Principal) {
		return "", Key{}, fmt.Errorf("principal %q: want 1 to 128 letters, digits or ._@:+- starting with a letter or digit", o.Principal)
	}
	if o.Principal == elicitation.Anonymous || o.Principal == elicitation.Reviewer {
		// Requests created on an endpoint without keys belong to
		// "anonymous", and "reviewer" names anonymous reviewers in audit
		// trails: a key with either name would pass for them.
		return "", Key{}, fmt.Errorf("principal %q is reserved; choose another name", o.Principal)
	}
	if len(o.Name) > 200 {
		return "", Key{}, fmt.Errorf("name: at most 200 characters")
	}
	now := time.Now
	if o.Now != nil {
		now = o.Now
	}
	secret := Generate()
	h := Hash(secret)
	k := Key{ID: IDOf(h), Hash: h, Principal: o.Principal, Name: o.Name, CreatedAt: now().UTC().Truncate(time.Millisecond)}
	if o.TTL > 0 {
		k.ExpiresAt = k.CreatedAt.Add(o.TTL)
	}
	if err := s.Put(ctx, k); err != nil {
		return "", Key{}, fmt.Errorf("store API key: %w", err)
	}
	return secret, k, nil
}

// Verify returns the active key that secret is. It returns an error
// wrapping ErrInvalid if secret is malformed, unknown, revoked or expired,
// and another error if the store fails. It is the one rule: the
// middleware's Verifier decides every uncached key with it.
func Verify(ctx context.Context, s Store, secret string, now time.Time) (Key, error) {
	if !WellFormed(secret) {
		return Key{}, ErrInvalid
	}
	k, err := s.Lookup(ctx, Hash(secret))
	switch {
	case errors.Is(err, ErrNotFound):
		return Key{}, ErrInvalid
	case err != nil:
		return Key{}, fmt.Errorf("look up API key: %w", err)
	case !k.Active(now):
		return Key{}, ErrInvalid
	}
	return k, nil
}
