package boltstore

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// The inbox index's values in a compact binary form, because an inbox
// decodes every pending entry (10,000 JSON decodes were most of an inbox
// page's time, docs/benchmarks.md): a version byte, then the fields in a
// fixed order, strings as a uvarint length and their bytes, times as a
// varint of Unix nanoseconds (0: the zero time), counts as uvarints.
// Values written as JSON (the index's first form) still decode, and so
// do values of version 1, whose approvals have no For (version 2 writes
// whom each approval was made for, after its digest).
const entryVersion = 2

func encodeEntry(e elicitation.InboxEntry) []byte {
	n := 32 + len(e.ID) + len(e.Kind) + len(e.Owner) + len(e.Headline)
	for _, r := range e.Reviewers {
		n += 2 + len(r)
	}
	for _, a := range e.Approvers {
		n += 27 + len(a.By) + len(a.SubmissionID) + len(a.AnswerDigest) + len(a.For)
	}
	b := make([]byte, 1, n)
	b[0] = entryVersion
	for _, s := range []string{e.ID, string(e.Kind), e.Owner, e.Headline} {
		b = appendString(b, s)
	}
	b = appendTime(appendTime(b, e.CreatedAt), e.ExpiresAt)
	b = binary.AppendUvarint(b, uint64(max(e.Approvals, 0)))
	b = binary.AppendUvarint(b, uint64(len(e.Reviewers)))
	for _, r := range e.Reviewers {
		b = appendString(b, r)
	}
	b = binary.AppendUvarint(b, uint64(len(e.Approvers)))
	for _, a := range e.Approvers {
		b = appendTime(appendString(appendString(b, a.By), a.SubmissionID), a.At)
		b = appendString(appendString(b, a.AnswerDigest), a.For)
	}
	return b
}

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

func appendTime(b []byte, t time.Time) []byte {
	if t.IsZero() {
		return binary.AppendVarint(b, 0)
	}
	return binary.AppendVarint(b, t.UnixNano())
}

var errEntryDamaged = errors.New("damaged inbox entry")

// entryReader reads the fields of an encoded entry; the first failure
// sticks. Strings that repeat across entries (kinds, owners, reviewers)
// are shared through names, kept for one listing.
type entryReader struct {
	b     []byte
	err   error
	names map[string]string
}

func (r *entryReader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = errEntryDamaged
		return 0
	}
	r.b = r.b[n:]
	return v
}

// bytes reads a string's bytes (nil after a failure).
func (r *entryReader) bytes() []byte {
	n := r.uvarint()
	if r.err != nil || n > uint64(len(r.b)) {
		r.err = errEntryDamaged
		return nil
	}
	raw := r.b[:n]
	r.b = r.b[n:]
	return raw
}

func (r *entryReader) str() string { return string(r.bytes()) }

// name is str for a string that repeats across entries.
func (r *entryReader) name() string {
	raw := r.bytes()
	if s, ok := r.names[string(raw)]; ok {
		return s
	}
	s := string(raw)
	if r.names != nil && len(r.names) < maxNames {
		r.names[s] = s
	}
	return s
}

// maxNames bounds the strings one listing shares.
const maxNames = 4096

func (r *entryReader) time() time.Time {
	if r.err != nil {
		return time.Time{}
	}
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.err = errEntryDamaged
		return time.Time{}
	}
	r.b = r.b[n:]
	if v == 0 {
		return time.Time{}
	}
	return time.Unix(0, v).UTC()
}

// count reads a list's length, bounded by what is left (each element takes
// at least one byte), so a damaged count cannot allocate without bound.
func (r *entryReader) count() int {
	n := r.uvarint()
	if n > uint64(len(r.b)) {
		r.err = errEntryDamaged
		return 0
	}
	return int(n)
}

func decodeEntry(v []byte, e *elicitation.InboxEntry) error {
	return decodeEntryNames(v, e, nil)
}

// decodeEntryNames is decodeEntry sharing repeated strings through names
// (nil: none).
func decodeEntryNames(v []byte, e *elicitation.InboxEntry, names map[string]string) error {
	if len(v) > 0 && v[0] == '{' {
		return json.Unmarshal(v, e)
	}
	if len(v) == 0 || v[0] < 1 || v[0] > entryVersion {
		return fmt.Errorf("%w: unknown version", errEntryDamaged)
	}
	withFor := v[0] >= 2
	r := &entryReader{b: v[1:], names: names}
	e.ID, e.Kind, e.Owner, e.Headline = r.str(), elicitation.Kind(r.name()), r.name(), r.str()
	e.CreatedAt, e.ExpiresAt = r.time(), r.time()
	e.Approvals = int(min(r.uvarint(), 1<<20))
	if n := r.count(); n > 0 {
		e.Reviewers = make([]string, n)
		for i := range e.Reviewers {
			e.Reviewers[i] = r.name()
		}
	}
	if n := r.count(); n > 0 {
		e.Approvers = make([]elicitation.Approval, n)
		for i := range e.Approvers {
			a := &e.Approvers[i]
			a.By, a.SubmissionID, a.At = r.name(), r.str(), r.time()
			a.AnswerDigest = r.str()
			if withFor {
				a.For = r.name()
			}
		}
	}
	if r.err == nil && len(r.b) != 0 {
		r.err = fmt.Errorf("%w: trailing bytes", errEntryDamaged)
	}
	return r.err
}
