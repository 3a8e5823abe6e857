package boltstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// The outbox is one bucket ordered by DueAt (keyed as ClaimDelivery and
// SettleDelivery name a delivery), and an index ordered by target, then
// the time of the next attempt (Delivery.NextAt), so that each target's
// due deliveries are a prefix of its part of the index: DueDeliveries
// reads at most limit of each target, however many wait.
var bucketOutboxDue = []byte("outboxdue") // len(target) (2 bytes) + target + nextAt (8 bytes) + delivery id -> outbox key

func outboxKey(d elicitation.Delivery) []byte {
	k := binary.BigEndian.AppendUint64(nil, uint64(d.DueAt.UnixNano()))
	return append(k, d.ID...)
}

func targetPrefix(target string) []byte {
	return append(binary.BigEndian.AppendUint16(nil, uint16(len(target))), target...)
}

func dueKey(d elicitation.Delivery) []byte {
	k := binary.BigEndian.AppendUint64(targetPrefix(d.Target), uint64(d.NextAt().UnixNano()))
	return append(k, d.ID...)
}

func putDeliveries(tx *bolt.Tx, ds []elicitation.Delivery) error {
	for _, d := range ds {
		if err := putDelivery(tx, d); err != nil {
			return err
		}
	}
	return nil
}

// putDelivery writes d and its index entry (replacing the old one).
func putDelivery(tx *bolt.Tx, d elicitation.Delivery) error {
	if d.ID == "" || d.RequestID == "" {
		return fmt.Errorf("a delivery needs an id and a request id")
	}
	b, err := json.Marshal(d)
	if err != nil {
		return fmt.Errorf("encode delivery %s: %w", d.ID, err)
	}
	if err := unindex(tx, d); err != nil {
		return err
	}
	if err := tx.Bucket(bucketOutbox).Put(outboxKey(d), b); err != nil {
		return err
	}
	return tx.Bucket(bucketOutboxDue).Put(dueKey(d), outboxKey(d))
}

// deleteDelivery removes the delivery d names (by ID and DueAt), if held.
func deleteDelivery(tx *bolt.Tx, d elicitation.Delivery) error {
	if err := unindex(tx, d); err != nil {
		return err
	}
	return tx.Bucket(bucketOutbox).Delete(outboxKey(d))
}

// unindex removes the index entry of the stored delivery d names.
func unindex(tx *bolt.Tx, d elicitation.Delivery) error {
	cur, found, err := getDelivery(tx, d)
	if err != nil || !found {
		return err
	}
	return tx.Bucket(bucketOutboxDue).Delete(dueKey(cur))
}

func getDelivery(tx *bolt.Tx, d elicitation.Delivery) (elicitation.Delivery, bool, error) {
	var cur elicitation.Delivery
	b := tx.Bucket(bucketOutbox).Get(outboxKey(d))
	if b == nil {
		return cur, false, nil
	}
	if err := json.Unmarshal(b, &cur); err != nil {
		return cur, false, fmt.Errorf("decode delivery %s: %w", d.ID, err)
	}
	return cur, true, nil
}

// DueDeliveries implements elicitation.Store: for each target, the
// prefix of its part of the index whose next attempt is due, at most limit
// of it; elicitation.FairDue orders the listing.
func (s *Store) DueDeliveries(ctx context.Context, now time.Time, limit int) ([]elicitation.Delivery, error) {
	var out []elicitation.Delivery
	err := s.view(ctx, func(tx *bolt.Tx) error {
		outbox := tx.Bucket(bucketOutbox)
		c := tx.Bucket(bucketOutboxDue).Cursor()
		for k, v := c.First(); k != nil; {
			if len(k) < 2 || len(k) < 2+int(binary.BigEndian.Uint16(k))+8 {
				k, v = c.Next() // not an index key: nothing this store wrote
				continue
			}
			n := 2 + int(binary.BigEndian.Uint16(k))
			prefix := k[:n]
			taken := 0
			for ; k != nil && bytes.HasPrefix(k, prefix) && taken < limit; k, v = c.Next() {
				if len(k) < n+8 {
					continue
				}
				if int64(binary.BigEndian.Uint64(k[n:n+8])) > now.UnixNano() {
					break
				}
				raw := outbox.Get(v)
				if raw == nil {
					continue
				}
				var d elicitation.Delivery
				if err := json.Unmarshal(raw, &d); err != nil {
					return fmt.Errorf("decode delivery %s: %w", k[n+8:], err)
				}
				if d.Due(now) {
					out = append(out, d)
					taken++
				}
			}
			// The next target's part.
			k, v = c.Seek(append(bytes.Clone(prefix), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("due deliveries: %w", err)
	}
	return elicitation.FairDue(out, limit), nil
}

// ClaimDelivery implements elicitation.Store.
func (s *Store) ClaimDelivery(ctx context.Context, d elicitation.Delivery, now, until time.Time) (elicitation.Delivery, bool, error) {
	var claimed elicitation.Delivery
	ok := false
	err := s.update(ctx, "claim delivery "+d.ID, func(tx *bolt.Tx) error {
		cur, found, err := getDelivery(tx, d)
		if err != nil || !found || !cur.Due(now) {
			return err
		}
		cur.Attempts++
		cur.Lease = elicitation.NewLease()
		cur.NotBefore = until
		if err := putDelivery(tx, cur); err != nil {
			return err
		}
		claimed, ok = cur, true
		return nil
	})
	return claimed, ok, err
}

// SettleDelivery implements elicitation.Store.
func (s *Store) SettleDelivery(ctx context.Context, d elicitation.Delivery, retryAt time.Time, entry elicitation.AuditEntry) error {
	return s.update(ctx, "settle delivery "+d.ID, func(tx *bolt.Tx) error {
		cur, found, err := getDelivery(tx, d)
		switch {
		case err != nil:
			return err
		case !found || d.Lease == "" || cur.Lease != d.Lease:
			return fmt.Errorf("settle delivery %s: the claim is no longer held: %w", d.ID, elicitation.ErrConflict)
		}
		if retryAt.IsZero() {
			if err := deleteDelivery(tx, d); err != nil {
				return err
			}
		} else {
			cur.Lease, cur.NotBefore = "", retryAt
			if err := putDelivery(tx, cur); err != nil {
				return err
			}
		}
		if tx.Bucket(bucketState).Get([]byte(d.RequestID)) == nil {
			return nil // the request was cleaned up: nothing to audit
		}
		return appendAudit(tx, d.RequestID, entry)
	})
}

// cleanupOutbox removes the deliveries whose request's retention ended.
func cleanupOutbox(tx *bolt.Tx, now time.Time) error {
	b, idx := tx.Bucket(bucketOutbox), tx.Bucket(bucketOutboxDue)
	var doomed, unindexed [][]byte
	err := b.ForEach(func(k, v []byte) error {
		var d elicitation.Delivery
		err := json.Unmarshal(v, &d)
		if err == nil && d.RetainUntil.After(now) {
			return nil
		}
		doomed = append(doomed, append([]byte(nil), k...))
		if err == nil {
			unindexed = append(unindexed, dueKey(d))
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, k := range unindexed {
		if err := idx.Delete(k); err != nil {
			return err
		}
	}
	for _, k := range doomed {
		if err := b.Delete(k); err != nil {
			return err
		}
	}
	return nil
}
