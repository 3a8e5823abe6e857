package boltstore

import (
	"bytes"
	"encoding/json"
	"fmt"
	bolt "go.etcd.io/bbolt"
	"strconv"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// decodeState decodes a stored request state. A status read is the
// commonest call and decoding its state was nearly all of the store's part
// of it, so the JSON that json.Marshal writes for a State (compact, every
// string without escapes, keys the decoder knows) is read by a small
// scanner; anything else (an escape, whitespace, approvers, a key added to
// State that the scanner does not know yet) is decoded by encoding/json,
// so the result is always encoding/json's.
func decodeState(b []byte, st *elicitation.State) error {
	if !stateByEncodingJSON && scanState(b, st) {
		return nil
	}
	*st = elicitation.State{}
	return json.Unmarshal(b, st)
}

// stateByEncodingJSON, if set (by benchmarks), decodes every state with
// encoding/json, as before the scanner.
var stateByEncodingJSON bool

// getState reads and decodes the state of id; ok is false when there is none.
func getState(tx *bolt.Tx, id string, st *elicitation.State) (bool, error) {
	b := tx.Bucket(bucketState).Get([]byte(id))
	if b == nil {
		return false, nil
	}
	if err := decodeState(b, st); err != nil {
		return false, fmt.Errorf("decode %s of %s: %w", bucketState, id, err)
	}
	return true, nil
}

type stateScanner struct {
	b []byte
	i int
}

// scanState decodes b into st if b is a State as json.Marshal writes it
// with keys it knows; it reports false, leaving st as it was, otherwise.
func scanState(b []byte, st *elicitation.State) bool {
	var s elicitation.State
	p := stateScanner{b: b}
	if !p.next('{') {
		return false
	}
	if p.next('}') {
		*st = s
		return p.i == len(b)
	}
	for {
		key, ok := p.str()
		if !ok || !p.next(':') || !p.field(&s, string(key)) {
			return false
		}
		if p.next(',') {
			continue
		}
		if !p.next('}') || p.i != len(b) {
			return false
		}
		*st = s
		return true
	}
}

func (p *stateScanner) next(c byte) bool {
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

// str reads a string without escapes and returns its contents.
func (p *stateScanner) str() ([]byte, bool) {
	if !p.next('"') {
		return nil, false
	}
	end := bytes.IndexByte(p.b[p.i:], '"')
	if end < 0 {
		return nil, false
	}
	s := p.b[p.i : p.i+end]
	if bytes.IndexByte(s, '\\') >= 0 {
		return nil, false
	}
	p.i += end + 1
	return s, true
}

// field reads the value of key into s; false for a key or value it does
// not read (encoding/json then decodes the whole state).
func (p *stateScanner) field(s *elicitation.State, key string) bool {
	var str *string
	var t *time.Time
	switch key {
	case "id":
		str = &s.ID
	case "owner":
		str = &s.Owner
	case "decidedBy":
		str = &s.DecidedBy
	case "submissionId":
		str = &s.SubmissionID
	case "answerDigest":
		str = &s.AnswerDigest
	case "kind", "status", "decision", "decidedVia":
		return p.named(s, key)
	case "createdAt":
		t = &s.CreatedAt
	case "expiresAt":
		t = &s.ExpiresAt
	case "retainUntil":
		t = &s.RetainUntil
	case "decidedAt":
		t = &s.DecidedAt
	case "consumedAt":
		t = &s.ConsumedAt
	case "approvals":
		return p.int(&s.Approvals)
	default: // approvers, or a key this scanner does not know
		return false
	}
	if t != nil {
		start := p.i
		if _, ok := p.str(); !ok {
			return false
		}
		return t.UnmarshalJSON(p.b[start:p.i]) == nil
	}
	v, ok := p.str()
	*str = string(v)
	return ok
}

// named reads the string-typed names of a State.
func (p *stateScanner) named(s *elicitation.State, key string) bool {
	v, ok := p.str()
	switch key {
	case "kind":
		s.Kind = elicitation.Kind(v)
	case "status":
		s.Status = elicitation.Status(v)
	case "decision":
		s.Decision = elicitation.Decision(v)
	case "decidedVia":
		s.DecidedVia = elicitation.Via(v)
	}
	return ok
}

// int reads a non-negative integer.
func (p *stateScanner) int(n *int) bool {
	start := p.i
	for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
		p.i++
	}
	v, err := strconv.Atoi(string(p.b[start:p.i]))
	*n = v
	return err == nil
}
