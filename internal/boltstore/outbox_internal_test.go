package boltstore

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// TestDueIndexBuiltForAnOlderFile: a file written before the outbox's
// per-target index existed gets it at Open, filled from the outbox, so
// that its deliveries are still listed.
func TestDueIndexBuiltForAnOlderFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "elicitation.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	st := elicitation.State{ID: "req-1", Kind: elicitation.KindApproval, Status: elicitation.StatusPending, CreatedAt: now, ExpiresAt: now.Add(time.Hour), RetainUntil: now.Add(2 * time.Hour)}
	r := elicitation.Request{State: st, Payload: elicitation.Payload{Message: "m"}}
	for _, tg := range []string{"a", "b"} {
		r.Outbox = append(r.Outbox, elicitation.NewDelivery(st, elicitation.EventCreated, tg, now, now))
	}
	if err := s.Create(context.Background(), r, elicitation.AuditEntry{At: now, Action: elicitation.ActionCreated, Principal: "alice"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *bolt.Tx) error { return tx.DeleteBucket(bucketOutboxDue) }); err != nil {
		t.Fatal(err)
	}
	_ = db.Close()

	s, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ds, err := s.DueDeliveries(context.Background(), now, 10)
	if err != nil || len(ds) != 2 {
		t.Fatalf("DueDeliveries after the index was rebuilt = %+v, %v; want both", ds, err)
	}
}
