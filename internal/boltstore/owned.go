package boltstore

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"

	bolt "go.etcd.io/bbolt"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// The owners' index: one key per request, written by Create, removed with
// the request by Cleanup (the owner and the creation time never change).
// Keys start with the SHA-256 of the owner, so that an owner of any length
// or bytes is one fixed-size prefix, then the creation time inverted (newest
// first in key order), then the id.
var bucketOwned = []byte("owned") // sha256(owner) + ^createdAt (8 bytes) + id -> nothing

func ownedPrefix(owner string) []byte {
	sum := sha256.Sum256([]byte(owner))
	return sum[:]
}

func ownedKey(owner string, p elicitation.OwnedPosition) []byte {
	k := binary.BigEndian.AppendUint64(ownedPrefix(owner), math.MaxUint64-uint64(p.CreatedAt.UnixNano()))
	return append(k, p.ID...)
}

func putOwned(tx *bolt.Tx, st elicitation.State) error {
	return tx.Bucket(bucketOwned).Put(ownedKey(st.Owner, elicitation.PositionOf(st)), nil)
}

// removeOwned removes the index keys of the request id, read from its
// state (nothing if it has none): the owners' index's and the owners'
// pending index's.
func removeOwned(tx *bolt.Tx, id []byte) error {
	var st elicitation.State
	ok, err := getState(tx, string(id), &st)
	if err != nil || !ok {
		return err
	}
	if err := tx.Bucket(bucketOwnerPending).Delete(ownerPendingKey(st)); err != nil {
		return err
	}
	return tx.Bucket(bucketOwned).Delete(ownedKey(st.Owner, elicitation.PositionOf(st)))
}

// OwnedRequests implements elicitation.Store: a seek to the position in
// the owner's part of the index, then the states of at most limit keys.
func (s *Store) OwnedRequests(ctx context.Context, owner string, after elicitation.OwnedPosition, limit int) ([]elicitation.State, bool, error) {
	var out []elicitation.State
	more := false
	err := s.view(ctx, func(tx *bolt.Tx) error {
		out, more = nil, false
		prefix := ownedPrefix(owner)
		c := tx.Bucket(bucketOwned).Cursor()
		k, _ := c.Seek(prefix)
		if !after.IsZero() {
			from := ownedKey(owner, after)
			if k, _ = c.Seek(from); bytes.Equal(k, from) {
				k, _ = c.Next()
			}
		}
		for ; k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
			if len(out) == limit {
				more = true
				return nil
			}
			if len(k) <= len(prefix)+8 {
				return fmt.Errorf("owned index key %x is too short", k)
			}
			var st elicitation.State
			ok, err := getState(tx, string(k[len(prefix)+8:]), &st)
			if err != nil {
				return err
			}
			if ok {
				out = append(out, st)
			}
		}
		return nil
	})
	if err != nil {
		return nil, false, fmt.Errorf("owned requests: %w", err)
	}
	return out, more, nil
}
