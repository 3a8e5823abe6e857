package boltstore

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// The outbox is one bucket ordered by DueAt, so that the due deliveries are
// a prefix of it.

func outboxKey(d elicitation.Delivery) []byte {
	k := binary.BigEndian.AppendUint64(nil, uint64(d.DueAt.UnixNano()))
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

func putDelivery(tx *bolt.Tx, d elicitation.Delivery) error {
	if d.ID == "" || d.RequestID == "" {
		return fmt.Errorf("a delivery needs an id and a request id")
	}
	b, err := json.Marshal(d)
	if err != nil {
		return fmt.Errorf("encode delivery %s: %w", d.ID, err)
	}
	return tx.Bucket(bucketOutbox).Put(outboxKey(d), b)
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

// DueDeliveries implements elicitation.Store: the due deliveries are a
// prefix of the bucket (by DueAt); those backing off are skipped, and
// elicitation.FairDue shares the listing among targets.
func (s *Store) DueDeliveries(ctx context.Context, now time.Time, limit int) ([]elicitation.Delivery, error) {
	var out []elicitation.Delivery
	err := s.view(ctx, func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketOutbox).Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if int64(binary.BigEndian.Uint64(k[:8])) > now.UnixNano() {
				break
			}
			var d elicitation.Delivery
			if err := json.Unmarshal(v, &d); err != nil {
				return fmt.Errorf("decode delivery %s: %w", k[8:], err)
			}
			if d.Due(now) {
				out = append(out, d)
			}
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
			if err := tx.Bucket(bucketOutbox).Delete(outboxKey(d)); err != nil {
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
	b := tx.Bucket(bucketOutbox)
	var doomed [][]byte
	err := b.ForEach(func(k, v []byte) error {
		var d elicitation.Delivery
		if err := json.Unmarshal(v, &d); err != nil || !d.RetainUntil.After(now) {
			doomed = append(doomed, append([]byte(nil), k...))
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, k := range doomed {
		if err := b.Delete(k); err != nil {
			return err
		}
	}
	return nil
}
