package boltstore

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// Delegations (elicitation.Delegations): one bucket, created by the first
// delegation, id -> the delegation as JSON. There are few (a reviewer has
// at most MaxDelegationsFrom that have not ended), so a listing reads the
// bucket; each write also removes the delegations that ended more than
// DelegationRetention before it, so the bucket never grows without bound.
var bucketDelegations = []byte("delegations")

var _ elicitation.Delegations = (*Store)(nil)

// PutDelegation implements elicitation.Delegations.
func (s *Store) PutDelegation(ctx context.Context, d elicitation.Delegation) error {
	if err := elicitation.CheckDelegationKey(d.From, d.ID); err != nil {
		return fmt.Errorf("put delegation: %w", err)
	}
	return s.update(ctx, "put delegation", func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(bucketDelegations)
		if err != nil {
			return err
		}
		if b.Get([]byte(d.ID)) != nil {
			return fmt.Errorf("delegation %s: %w", d.ID, elicitation.ErrConflict)
		}
		open := 0
		var stale [][]byte
		err = b.ForEach(func(k, v []byte) error {
			var o elicitation.Delegation
			if err := json.Unmarshal(v, &o); err != nil {
				return fmt.Errorf("decode delegation %s: %w", k, err)
			}
			if o.End.Add(elicitation.DelegationRetention).Before(d.CreatedAt) {
				stale = append(stale, slices.Clone(k))
			}
			if o.From == d.From && o.End.After(d.CreatedAt) {
				open++
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, k := range stale { // not during ForEach, which must not modify the bucket
			if err := b.Delete(k); err != nil {
				return err
			}
		}
		if open >= elicitation.MaxDelegationsFrom {
			return fmt.Errorf("delegations of %s: %w", d.From, elicitation.ErrTooManyDelegations)
		}
		return putJSON(tx, bucketDelegations, d.ID, d)
	})
}

// EndDelegation implements elicitation.Delegations.
func (s *Store) EndDelegation(ctx context.Context, from, id string, at time.Time) (elicitation.Delegation, error) {
	var d elicitation.Delegation
	if err := elicitation.CheckDelegationKey(from, id); err != nil {
		return d, fmt.Errorf("end delegation: %w", err)
	}
	err := s.update(ctx, "end delegation", func(tx *bolt.Tx) error {
		if tx.Bucket(bucketDelegations) == nil {
			return fmt.Errorf("delegation %s: %w", id, elicitation.ErrNotFound)
		}
		ok, err := getJSON(tx, bucketDelegations, id, &d)
		switch {
		case err != nil:
			return err
		case !ok || d.From != from:
			return fmt.Errorf("delegation %s: %w", id, elicitation.ErrNotFound)
		case !d.End.After(at):
			return fmt.Errorf("delegation %s ended: %w", id, elicitation.ErrConflict)
		}
		d.End, d.EndedAt = at.UTC(), at.UTC()
		return putJSON(tx, bucketDelegations, id, d)
	})
	if err != nil {
		return elicitation.Delegation{}, err
	}
	return d, nil
}

// ListDelegations implements elicitation.Delegations.
func (s *Store) ListDelegations(ctx context.Context, after time.Time) ([]elicitation.Delegation, error) {
	var out []elicitation.Delegation
	err := s.view(ctx, func(tx *bolt.Tx) error {
		out = nil
		b := tx.Bucket(bucketDelegations)
		if b == nil {
			return nil
		}
		return b.ForEach(func(k, v []byte) error {
			var d elicitation.Delegation
			if err := json.Unmarshal(v, &d); err != nil {
				return fmt.Errorf("decode delegation %s: %w", k, err)
			}
			if d.End.After(after) {
				out = append(out, d)
			}
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("list delegations: %w", err)
	}
	elicitation.SortDelegations(out)
	return out[:min(len(out), elicitation.MaxDelegations)], nil
}
