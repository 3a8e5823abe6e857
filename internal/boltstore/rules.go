package boltstore

import (
	"context"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// bucketRules holds the standing approvals: rule id -> the rule's JSON.
// They are few (a bound per author, a day's life): a listing scans them
// all. The bucket is made by the first rule a file holds.
var bucketRules = []byte("rules")

var _ elicitation.Rules = (*Store)(nil)

// CreateRule implements elicitation.Rules: the author's room
// (elicitation.RoomForRule) is counted in the write's transaction, which
// also forgets the rules past their retention.
func (s *Store) CreateRule(ctx context.Context, r elicitation.Rule) error {
	return s.update(ctx, "create rule "+r.ID, func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(bucketRules)
		if err != nil {
			return err
		}
		if b.Get([]byte(r.ID)) != nil {
			return fmt.Errorf("create rule %s: %w", r.ID, elicitation.ErrConflict)
		}
		var (
			gone [][]byte
			mine []elicitation.Rule // the author's: the bound counts them in this write
		)
		err = eachJSON(tx.Bucket(bucketRules), func(o elicitation.Rule) error {
			if !r.CreatedAt.Before(o.RetainUntil) {
				gone = append(gone, []byte(o.ID))
			} else if o.By == r.By {
				mine = append(mine, o)
			}
			return nil
		})
		if err != nil {
			return err
		}
		if err := elicitation.RoomForRule(mine, r); err != nil {
			return err
		}
		for _, k := range gone {
			if err := b.Delete(k); err != nil {
				return err
			}
		}
		return putJSON(tx, bucketRules, r.ID, r)
	})
}

// RulesFor implements elicitation.Rules.
func (s *Store) RulesFor(ctx context.Context, principal string, kind elicitation.Kind, now time.Time) ([]elicitation.Rule, error) {
	return s.rulesWhere(ctx, "rules for "+principal, func(r elicitation.Rule) bool {
		return r.Principal == principal && r.Kind == kind && r.LiveAt(now)
	})
}

// RulesBy implements elicitation.Rules.
func (s *Store) RulesBy(ctx context.Context, author string) ([]elicitation.Rule, error) {
	out, err := s.rulesWhere(ctx, "rules by "+author, func(r elicitation.Rule) bool { return r.By == author })
	elicitation.SortNewest(out)
	return out, err
}

// rulesWhere lists the stored rules that keep says to.
func (s *Store) rulesWhere(ctx context.Context, op string, keep func(elicitation.Rule) bool) ([]elicitation.Rule, error) {
	var out []elicitation.Rule
	err := s.view(ctx, func(tx *bolt.Tx) error {
		out = nil
		return eachJSON(tx.Bucket(bucketRules), func(r elicitation.Rule) error {
			if keep(r) {
				out = append(out, r)
			}
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	return out, nil
}

// changeRule reads rule id in one write transaction, lets change edit it
// (or refuse), and writes it back.
func (s *Store) changeRule(ctx context.Context, op, id string, change func(*elicitation.Rule) error) (elicitation.Rule, error) {
	var r elicitation.Rule
	err := s.update(ctx, op, func(tx *bolt.Tx) error {
		r = elicitation.Rule{}
		if tx.Bucket(bucketRules) == nil {
			return fmt.Errorf("%s: %w", op, elicitation.ErrNotFound)
		}
		ok, err := getJSON(tx, bucketRules, id, &r)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("%s: %w", op, elicitation.ErrNotFound)
		}
		if err := change(&r); err != nil {
			return err
		}
		return putJSON(tx, bucketRules, id, r)
	})
	return r, err
}

// RevokeRule implements elicitation.Rules.
func (s *Store) RevokeRule(ctx context.Context, author, id string, at time.Time) (elicitation.Rule, error) {
	op := "revoke rule " + id
	return s.changeRule(ctx, op, id, func(r *elicitation.Rule) error {
		if r.By != author {
			return fmt.Errorf("%s: %w", op, elicitation.ErrNotFound)
		}
		if r.RevokedAt.IsZero() {
			r.RevokedAt = at
		}
		return nil
	})
}

// UseRule implements elicitation.Rules: bbolt's one writer at a time makes
// the check and the count one step.
func (s *Store) UseRule(ctx context.Context, want elicitation.Rule, at time.Time) (elicitation.Rule, error) {
	op := "use rule " + want.ID
	return s.changeRule(ctx, op, want.ID, func(r *elicitation.Rule) error {
		if r.Principal != want.Principal || r.Kind != want.Kind {
			return fmt.Errorf("%s: %w", op, elicitation.ErrNotFound)
		}
		if !r.LiveAt(at) {
			return fmt.Errorf("%s: %w", op, elicitation.ErrRuleSpent)
		}
		r.Uses++
		return nil
	})
}
