package grant

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// ErrInvalid is wrapped by the error for a record a Store refuses to keep
// (Check) and for a kind or an id no record can have (CheckKey).
var ErrInvalid = errors.New("grant: invalid record")

// The bounds Check applies.
const (
	MaxKind = 32  // bytes of [a-z0-9-]
	MaxID   = 512 // bytes of printable ASCII, no space
)

// The range of Expires a Store can keep: Unix nanoseconds that are not
// negative, so that every store orders and compares them as numbers.
var (
	minExpires = time.Unix(0, 0)
	maxExpires = time.Unix(0, math.MaxInt64)
)

// Check decides whether a Store keeps r, and says which field is wrong and
// why. Every Store calls it before it writes anything. The errors wrap
// ErrInvalid and never quote the id or the data (an id may be a secret,
// such as a code's).
func Check(r Record) error {
	if why := kindProblem(r.Kind); why != "" {
		return fmt.Errorf("%w: %s", ErrInvalid, why)
	}
	why := idProblem(r.ID)
	switch {
	case why != "":
	case len(r.Data) > MaxData:
		why = fmt.Sprintf("data is %d bytes, more than the %d a record holds", len(r.Data), MaxData)
	case r.Expires.IsZero():
		why = "expires is missing (every record expires)"
	case r.Expires.Before(minExpires) || r.Expires.After(maxExpires):
		why = fmt.Sprintf("expires %s is outside 1970 to 2262", r.Expires.UTC().Format(time.RFC3339))
	case r.Version < 0:
		why = fmt.Sprintf("version %d is negative", r.Version)
	default:
		return nil
	}
	return fmt.Errorf("%w: %s: %s", ErrInvalid, r.Kind, why)
}

// CheckKey is Check for the kind and id of a Get or a Delete. An invalid
// kind is the caller's mistake (ErrInvalid); an invalid id names no record,
// so its error wraps ErrNotFound as well: an id read from a request (a
// client id, a code) that no record can have is simply unknown.
func CheckKey(kind, id string) error {
	if why := kindProblem(kind); why != "" {
		return fmt.Errorf("%w: %s", ErrInvalid, why)
	}
	if why := idProblem(id); why != "" {
		return fmt.Errorf("%w: %w: %s: %s", ErrNotFound, ErrInvalid, kind, why)
	}
	return nil
}

// kindProblem says what is wrong with kind, or "".
func kindProblem(kind string) string {
	if kind == "" || len(kind) > MaxKind {
		return fmt.Sprintf("kind is %d bytes, want 1 to %d", len(kind), MaxKind)
	}
	for i := range len(kind) {
		if c := kind[i]; (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
			return fmt.Sprintf("kind %q: byte %d is not one of a-z, 0-9 and -", kind, i)
		}
	}
	return ""
}

// idProblem says what is wrong with id, or "", without quoting it.
func idProblem(id string) string {
	if id == "" || len(id) > MaxID {
		return fmt.Sprintf("id is %d bytes, want 1 to %d", len(id), MaxID)
	}
	for i := range len(id) {
		if c := id[i]; c <= ' ' || c > '~' {
			return fmt.Sprintf("id: byte %d is not printable ASCII (a space, a control byte or not ASCII)", i)
		}
	}
	return ""
}

// NewVersion is the version a Store gives a record it writes: random,
// positive, so that a version is never reused for another record of the
// same kind and id (one written after the first expired or was deleted),
// and a writer holding the old version loses with ErrConflict.
func NewVersion() int64 { return rand.Int64N(math.MaxInt64) + 1 }
