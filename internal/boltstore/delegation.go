package boltstore

import (
	"context"
	"fmt"
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

// allDelegations reads every delegation in the bucket (none if it is absent).
func allDelegations(tx *bolt.Tx) (all []elicitation.Delegation, err error) {
	err = eachJSON(tx.Bucket(bucketDelegations), func(d elicitation.Delegation) error {
		all = append(all, d)
		return nil
	})
	return all, err
}

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
		all, err := allDelegations(tx)
		if err != nil {
			return err
		}
		for _, o := range all {
			if o.End.Add(elicitation.DelegationRetention).Before(d.CreatedAt) {
				if err := b.Delete([]byte(o.ID)); err != nil {
					return err
				}
			}
		}
		if err := elicitation.RoomFor(all, d); err != nil {
			return err
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
		d = elicitation.Delegation{}
		if tx.Bucket(bucketDelegations) == nil {
			return fmt.Errorf("delegation %s: %w", id, elicitation.ErrNotFound)
		}
		ok, err := getJSON(tx, bucketDelegations, id, &d)
		switch {
		case err != nil:
			return err
		case !ok:
			return fmt.Errorf("delegation %s: %w", id, elicitation.ErrNotFound)
		}
		if d, err = d.Ended(from, at); err != nil {
			return err
		}
		return putJSON(tx, bucketDelegations, id, d)
	})
	if err != nil {
		return elicitation.Delegation{}, err
	}
	return d, nil
}

// ListDelegations implements elicitation.Delegations.
func (s *Store) ListDelegations(ctx context.Context, after time.Time) ([]elicitation.Delegation, error) {
	var all []elicitation.Delegation
	err := s.view(ctx, func(tx *bolt.Tx) (err error) {
		all, err = allDelegations(tx)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("list delegations: %w", err)
	}
	return elicitation.Listed(all, after), nil
}
