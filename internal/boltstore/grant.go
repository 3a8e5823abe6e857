package boltstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/mcp-elicitation/elicitation/internal/grant"
)

// The authorization server's records (grant.Store), in the same file as
// the requests: one bucket of records and one of their expiries, in time
// order, which Cleanup walks to remove the expired ones (a record is
// never returned at or after its expiry, whether or not Cleanup ran).
// Kinds hold no NUL, so kind + NUL + id names one record.
var (
	bucketGrants   = []byte("grants")   // kind + \x00 + id -> version (8 bytes) + expires (8, unix nanoseconds) + data
	bucketGrantDue = []byte("grantdue") // expires (8 bytes) + kind + \x00 + id -> nothing
)

// Grants is the embedded store's grant.Store. Every handle on a file
// shares its records, as with requests.
type Grants struct {
	s   *Store
	now func() time.Time
}

var _ grant.Store = (*Grants)(nil)

// Grants returns the grant.Store of s, which judges expiry by now (nil:
// time.Now). Its records leave the file with the Cleanup that runs at or
// after their expiry.
func (s *Store) Grants(now func() time.Time) *Grants {
	if now == nil {
		now = time.Now
	}
	return &Grants{s: s, now: now}
}

func grantKey(kind, id string) []byte {
	return append(append([]byte(kind), 0), id...)
}

func grantDueKey(expires int64, key []byte) []byte {
	return append(binary.BigEndian.AppendUint64(nil, uint64(expires)), key...)
}

// storedGrant is a record's value as stored.
type storedGrant struct {
	version int64
	expires int64 // unix nanoseconds
	data    []byte
}

func decodeGrant(v []byte) (storedGrant, error) {
	if len(v) < 16 {
		return storedGrant{}, fmt.Errorf("a stored grant of %d bytes is too short", len(v))
	}
	return storedGrant{
		version: int64(binary.BigEndian.Uint64(v)),
		expires: int64(binary.BigEndian.Uint64(v[8:])),
		data:    v[16:],
	}, nil
}

// live reads the record under key in tx: ok is false when there is none
// or it expired at now.
func live(tx *bolt.Tx, key []byte, now time.Time) (g storedGrant, ok bool, err error) {
	v := tx.Bucket(bucketGrants).Get(key)
	if v == nil {
		return storedGrant{}, false, nil
	}
	if g, err = decodeGrant(v); err != nil {
		return storedGrant{}, false, err
	}
	return g, now.UnixNano() < g.expires, nil
}

// Get implements grant.Store.
func (g *Grants) Get(ctx context.Context, kind, id string) (grant.Record, error) {
	if err := grant.CheckKey(kind, id); err != nil {
		return grant.Record{}, err
	}
	now := g.now()
	var (
		r     grant.Record
		found bool
	)
	err := g.s.view(ctx, func(tx *bolt.Tx) error {
		cur, ok, err := live(tx, grantKey(kind, id), now)
		if err != nil || !ok {
			return err
		}
		found = true
		r = grant.Record{Kind: kind, ID: id, Data: bytes.Clone(cur.data), Expires: time.Unix(0, cur.expires).UTC(), Version: cur.version}
		return nil
	})
	switch {
	case err != nil:
		return grant.Record{}, fmt.Errorf("get grant %s: %w", kind, err)
	case !found:
		return grant.Record{}, fmt.Errorf("get grant %s: %w", kind, grant.ErrNotFound)
	}
	return r, nil
}

// Put implements grant.Store: bbolt runs one writer at a time, so the
// version read and the write are one step.
func (g *Grants) Put(ctx context.Context, r grant.Record) (grant.Record, error) {
	if err := grant.Check(r); err != nil {
		return grant.Record{}, err
	}
	now := g.now()
	next := grant.NewVersion()
	key := grantKey(r.Kind, r.ID)
	err := g.s.update(ctx, "put grant "+r.Kind, func(tx *bolt.Tx) error {
		cur, ok, err := live(tx, key, now)
		switch {
		case err != nil:
			return err
		case !ok && r.Version != 0, ok && cur.version != r.Version:
			return grant.ErrConflict
		}
		if err := removeGrant(tx, key); err != nil {
			return err
		}
		v := binary.BigEndian.AppendUint64(nil, uint64(next))
		v = binary.BigEndian.AppendUint64(v, uint64(r.Expires.UnixNano()))
		if err := tx.Bucket(bucketGrants).Put(key, append(v, r.Data...)); err != nil {
			return err
		}
		return tx.Bucket(bucketGrantDue).Put(grantDueKey(r.Expires.UnixNano(), key), nil)
	})
	if err != nil {
		return grant.Record{}, fmt.Errorf("put grant %s: %w", r.Kind, err)
	}
	r.Version = next
	return r, nil
}

// Delete implements grant.Store.
func (g *Grants) Delete(ctx context.Context, kind, id string, version int64) error {
	if err := grant.CheckKey(kind, id); err != nil {
		return err
	}
	now := g.now()
	key := grantKey(kind, id)
	err := g.s.update(ctx, "delete grant "+kind, func(tx *bolt.Tx) error {
		cur, ok, err := live(tx, key, now)
		switch {
		case err != nil:
			return err
		case !ok:
			return grant.ErrNotFound
		case cur.version != version:
			return grant.ErrConflict
		}
		return removeGrant(tx, key)
	})
	if err != nil {
		return fmt.Errorf("delete grant %s: %w", kind, err)
	}
	return nil
}

// removeGrant deletes the record under key, live or expired, and its
// expiry; none is no error.
func removeGrant(tx *bolt.Tx, key []byte) error {
	v := tx.Bucket(bucketGrants).Get(key)
	if v == nil {
		return nil
	}
	cur, err := decodeGrant(v)
	if err != nil {
		return err
	}
	if err := tx.Bucket(bucketGrantDue).Delete(grantDueKey(cur.expires, key)); err != nil {
		return err
	}
	return tx.Bucket(bucketGrants).Delete(key)
}

// beforeGrantsRemoved, if set (by tests), runs between cleanupGrants'
// read of what is due and its removal.
var beforeGrantsRemoved func()

// cleanupGrants removes the records expired at now, CleanupBatch per
// transaction, in the order of their expiry (Cleanup's last step).
func (s *Store) cleanupGrants(ctx context.Context, now time.Time) error {
	for {
		due, err := s.dueKeys(ctx, bucketGrantDue, now, CleanupBatch)
		if err != nil || len(due) == 0 {
			return err
		}
		if beforeGrantsRemoved != nil {
			beforeGrantsRemoved()
		}
		err = s.update(ctx, "cleanup grants", func(tx *bolt.Tx) error {
			for _, k := range due {
				// A Put since the read moved the record's expiry, with
				// its due key: the record is not due.
				if tx.Bucket(bucketGrantDue).Get(k) == nil {
					continue
				}
				if err := removeGrant(tx, k[8:]); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil || len(due) < CleanupBatch {
			return err
		}
	}
}
