package boltstore

import (
	"bytes"
	"encoding/binary"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// The owners' pending index (elicitation.Request.MaxPending): one key per
// pending request, under its owner's digest and ordered by ExpiresAt,
// written by Create and removed by the Resolve that ends the pending state
// (and by Cleanup, with the request). Counting an owner's pending requests
// is a seek to the creation time in the owner's part and a count of the
// keys after it, so an expired request stops counting without a write.
// bbolt has one writer at a time: the count and the create are one
// transaction, and no other create comes between them.
var bucketOwnerPending = []byte("ownerpending") // sha256(owner) + expiresAt (8 bytes) + id -> nothing

func ownerPendingKey(st elicitation.State) []byte {
	k := binary.BigEndian.AppendUint64(ownedPrefix(st.Owner), uint64(st.ExpiresAt.UnixNano()))
	return append(k, st.ID...)
}

// admitPending returns ErrTooManyPending if r's owner already has
// r.MaxPending requests pending at r's creation, and otherwise files r in
// the index.
func admitPending(tx *bolt.Tx, r elicitation.Request) error {
	if r.MaxPending > 0 {
		prefix := ownedPrefix(r.State.Owner)
		c := tx.Bucket(bucketOwnerPending).Cursor()
		n := 0
		from := binary.BigEndian.AppendUint64(prefix, uint64(r.State.CreatedAt.UnixNano()+1))
		for k, _ := c.Seek(from); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
			if n++; n >= r.MaxPending {
				return fmt.Errorf("create %s: %d pending: %w", r.State.ID, r.MaxPending, elicitation.ErrTooManyPending)
			}
		}
	}
	return tx.Bucket(bucketOwnerPending).Put(ownerPendingKey(r.State), nil)
}
