package boltstore

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/mcp-elicitation/elicitation/internal/grant"
	"github.com/mcp-elicitation/elicitation/internal/grant/granttest"
	"github.com/mcp-elicitation/elicitation/internal/testclock"
)

// TestCleanupRemovesExpiredGrants: Cleanup removes every grant expired at
// its time, in more than one batch, with its expiry key, and keeps the
// live ones, including one whose expiry a Put moved later.
func TestCleanupRemovesExpiredGrants(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, err := Open(filepath.Join(t.TempDir(), "store.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	clk := testclock.New(granttest.T0)
	g := s.Grants(clk.Now)
	const expiring, living = 2*CleanupBatch + 7, 3
	for i := range expiring {
		if _, err := g.Put(ctx, granttest.Record("code", fmt.Sprint("c-", i), []byte("x"), time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	var live []grant.Record
	for i := range living {
		r, err := g.Put(ctx, granttest.Record("family", fmt.Sprint("f-", i), []byte("y"), time.Minute+time.Duration(i)*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		live = append(live, r)
	}
	// f-0 expired with the codes, but was extended first.
	live[0].Expires = granttest.T0.Add(2 * time.Hour)
	if live[0], err = g.Put(ctx, live[0]); err != nil {
		t.Fatal(err)
	}

	if _, err := s.Cleanup(ctx, granttest.T0.Add(time.Minute-time.Nanosecond)); err != nil {
		t.Fatal(err)
	}
	if n, d := countGrants(t, s); n != expiring+living || d != n {
		t.Fatalf("before expiry: %d grants, %d expiry keys; want %d each", n, d, expiring+living)
	}
	if _, err := s.Cleanup(ctx, granttest.T0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if n, d := countGrants(t, s); n != living || d != living {
		t.Fatalf("after Cleanup: %d grants, %d expiry keys; want %d each", n, d, living)
	}
	clk.Set(granttest.T0.Add(time.Minute))
	for _, r := range live {
		if got, err := g.Get(ctx, r.Kind, r.ID); err != nil || got.Version != r.Version {
			t.Fatalf("%s after Cleanup: %+v, %v", r.ID, got, err)
		}
	}
}

func countGrants(t *testing.T, s *Store) (grants, due int) {
	t.Helper()
	err := s.db.bolt.View(func(tx *bolt.Tx) error {
		grants = tx.Bucket(bucketGrants).Stats().KeyN
		due = tx.Bucket(bucketGrantDue).Stats().KeyN
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return grants, due
}

// TestCleanupKeepsAGrantExtendedMeanwhile: a Put that moves a record's
// expiry between Cleanup's read of what is due and its removal keeps the
// record. Not parallel: it sets a hook every store shares.
func TestCleanupKeepsAGrantExtendedMeanwhile(t *testing.T) {
	ctx := context.Background()
	s, err := Open(filepath.Join(t.TempDir(), "store.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	now := func() time.Time { return granttest.T0 }
	g := s.Grants(now)
	r, err := g.Put(ctx, granttest.Record("family", "f-1", []byte("y"), time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	beforeGrantsRemoved = func() {
		r.Expires = granttest.T0.Add(time.Hour)
		if r, err = g.Put(ctx, r); err != nil {
			t.Error(err)
		}
	}
	t.Cleanup(func() { beforeGrantsRemoved = nil })
	if _, err := s.Cleanup(ctx, granttest.T0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if got, err := g.Get(ctx, "family", "f-1"); err != nil || got.Version != r.Version {
		t.Fatalf("after Cleanup: %+v, %v; want version %d", got, err, r.Version)
	}
}
