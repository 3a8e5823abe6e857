package boltstore

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/jsonobj"
)

// decodeState decodes a stored request state. A status read is the
// commonest call and decoding its state was nearly all of the store's part
// of it, so the JSON that json.Marshal writes for a State (every string
// without escapes, keys the decoder knows) is read member by member
// (scanState); anything else (an escape, whitespace, approvers, a key added to
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

// scanState decodes b into st if b is a State as json.Marshal writes it,
// read member by member (internal/jsonobj) with keys it knows; it reports
// false, leaving st as it was, otherwise.
func scanState(b []byte, st *elicitation.State) bool {
	var s elicitation.State
	ok := true
	if !jsonobj.Members(b, func(key, value []byte) {
		ok = ok && stateField(&s, string(key), value)
	}) || !ok {
		return false
	}
	*st = s
	return true
}

// stateField reads the value of key into s; false for a key or value it
// does not read (encoding/json then decodes the whole state): approvers,
// a key it does not know (one that matches a field but for case
// included), a string with an escape, null.
func stateField(s *elicitation.State, key string, value []byte) bool {
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
		return named(s, key, value)
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
		n, err := strconv.Atoi(string(value))
		s.Approvals = n
		return err == nil
	default: // approvers, or a key this scanner does not know
		return false
	}
	if t != nil {
		_, ok := jsonobj.String(value)
		return ok && t.UnmarshalJSON(value) == nil
	}
	v, ok := jsonobj.String(value)
	*str = string(v)
	return ok
}

// named reads the string-typed names of a State.
func named(s *elicitation.State, key string, value []byte) bool {
	v, ok := jsonobj.String(value)
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
