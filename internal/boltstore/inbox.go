package boltstore

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// The inbox index: one entry per pending request, ordered by ExpiresAt,
// written by Create and rewritten (a quorum's vote) or removed (the
// decision, the cancel) by Resolve in the same transaction; entries whose
// request expired are skipped by a seek and removed by Cleanup.
var bucketPending = []byte("pending") // expiresAt (8 bytes) + id -> elicitation.InboxEntry (encodeEntry)

func pendingKey(expiresAt time.Time, id string) []byte {
	return append(binary.BigEndian.AppendUint64(nil, uint64(expiresAt.UnixNano())), id...)
}

func putPending(tx *bolt.Tx, e elicitation.InboxEntry) error {
	return tx.Bucket(bucketPending).Put(pendingKey(e.ExpiresAt, e.ID), encodeEntry(e))
}

// stepPending keeps the index (and the owners' pending index) true after
// a resolution's step: a vote rewrites the entry's approvers, anything
// else removes it.
func stepPending(tx *bolt.Tx, next elicitation.State) error {
	b := tx.Bucket(bucketPending)
	k := pendingKey(next.ExpiresAt, next.ID)
	if next.Status != elicitation.StatusPending {
		if err := tx.Bucket(bucketOwnerPending).Delete(ownerPendingKey(next)); err != nil {
			return err
		}
		return b.Delete(k)
	}
	raw := b.Get(k)
	if raw == nil {
		return nil
	}
	var e elicitation.InboxEntry
	if err := decodeEntry(raw, &e); err != nil {
		return fmt.Errorf("decode inbox entry %s: %w", next.ID, err)
	}
	e.Approvers = next.Approvers
	return putPending(tx, e)
}

// PendingEntries implements elicitation.Store: a seek to now in the
// index, then at most limit entries in order.
func (s *Store) PendingEntries(ctx context.Context, now time.Time, limit int) ([]elicitation.InboxEntry, error) {
	var out []elicitation.InboxEntry
	err := s.view(ctx, func(tx *bolt.Tx) error {
		out = make([]elicitation.InboxEntry, 0, min(limit, 1024))
		names := map[string]string{}
		c := tx.Bucket(bucketPending).Cursor()
		for k, v := c.Seek(binary.BigEndian.AppendUint64(nil, uint64(now.UnixNano()+1))); k != nil && len(out) < limit; k, v = c.Next() {
			out = append(out, elicitation.InboxEntry{})
			if err := decodeEntryNames(v, &out[len(out)-1], names); err != nil {
				return fmt.Errorf("decode inbox entry %s: %w", k[min(8, len(k)):], err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("pending entries: %w", err)
	}
	return out, nil
}

// cleanupPending removes the entries of requests expired by now.
func cleanupPending(tx *bolt.Tx, now time.Time) error {
	c := tx.Bucket(bucketPending).Cursor()
	end := uint64(now.UnixNano())
	for k, _ := c.First(); len(k) >= 8 && binary.BigEndian.Uint64(k) <= end; k, _ = c.First() {
		if err := c.Delete(); err != nil {
			return err
		}
	}
	return nil
}
