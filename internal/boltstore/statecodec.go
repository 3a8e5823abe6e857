package boltstore

import (
	"encoding/json"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// decodeState decodes a stored request state: the JSON json.Marshal wrote
// for it (putJSON). A hand-written scanner once read it member by member,
// about 2 µs faster per read; that is about 1% of a status call's CPU, not
// worth a second JSON reader to keep true (docs/benchmarks.md, "The
// store's state decode, plainly").
func decodeState(b []byte, st *elicitation.State) error {
	*st = elicitation.State{}
	return json.Unmarshal(b, st)
}

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
