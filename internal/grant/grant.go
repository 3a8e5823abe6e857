// Package grant is what the authorization server for MCP clients keeps
// between requests: clients that registered themselves, sign-ins in
// progress, authorization codes and refresh-token families. It knows
// nothing of OAuth's wire format: a Record is a kind, an id, the caller's
// bytes, an expiry and a version, and a Store writes it only over the
// version the caller read, so that a code is redeemed once and a refresh
// token rotates once however many processes (or Lambda instances) race.
//
// Check is the one place that decides what a Store keeps. Standard
// library only; internal/boltstore and internal/dynamostore implement
// Store (their Grants), and internal/grant/granttest is the contract suite
// both pass, with Memory, the fake for other packages' tests.
package grant

import (
	"context"
	"errors"
	"time"
)

// The errors a Store returns (wrapped or not; test with errors.Is).
var (
	// ErrNotFound: no record of that kind and id, or it expired.
	ErrNotFound = errors.New("grant: not found")
	// ErrConflict: the stored version is not the one the caller read
	// (another writer won), or a record to create already exists.
	ErrConflict = errors.New("grant: version conflict")
)

// MaxData bounds a Record's Data: a DynamoDB item is at most 400 KB and a
// grant is a few hundred bytes.
const MaxData = 64 << 10

// Record is one thing kept.
type Record struct {
	// Kind names what the record holds ("client", "login", "code",
	// "family", ...): ids are unique within a kind. 1 to 32 bytes of
	// [a-z0-9-].
	Kind string
	// ID is the record's id within its kind: 1 to 512 bytes of printable
	// ASCII (a client id may be a URL).
	ID string
	// Data is the caller's encoding, at most MaxData bytes.
	Data []byte
	// Expires is when the record is dropped: a Store never returns a
	// record at or after its expiry, and may delete it any time later.
	// Required.
	Expires time.Time
	// Version is 0 for a record not yet stored; a Store sets it on Put
	// (NewVersion: opaque, never 0, never reused for the same kind and
	// id, so a writer holding the version of a record that expired or
	// was deleted conflicts with the record written since).
	Version int64
}

// Store keeps Records. Implementations are safe for concurrent use, by
// this process and others sharing the same storage.
type Store interface {
	// Get returns the record, or ErrNotFound when there is none or it
	// has expired (or its id is one no record can have: CheckKey).
	Get(ctx context.Context, kind, id string) (Record, error)
	// Put stores r if the stored version is r.Version: 0 means that no
	// record of r's kind and id exists (an expired one counts as none).
	// It returns r with its new version, or ErrConflict and changes
	// nothing: a Put over the version of a record that has since expired
	// is ErrConflict too (the stored version is "none"). A record that
	// is invalid (Check: kind, id, size, no expiry) is refused with an
	// error that wraps ErrInvalid, says which and changes nothing.
	Put(ctx context.Context, r Record) (Record, error)
	// Delete removes the record if its stored version is version:
	// ErrConflict when another version is stored, ErrNotFound when none
	// is (or it expired).
	Delete(ctx context.Context, kind, id string, version int64) error
}
