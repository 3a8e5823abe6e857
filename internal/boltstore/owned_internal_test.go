package boltstore

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// TestOwnedIndexBuiltForAnOlderFile: a file written before the owners'
// index existed gets it at Open, filled from the stored requests (decided
// ones too), so that each owner's requests are listed.
func TestOwnedIndexBuiltForAnOlderFile(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "elicitation.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	for i, id := range []string{"req-1", "req-2", "req-3"} {
		owner := "alice"
		if i == 2 {
			owner = "bob"
		}
		st := elicitation.State{ID: id, Kind: elicitation.KindApproval, Owner: owner, Status: elicitation.StatusPending, CreatedAt: now.Add(time.Duration(i) * time.Second), ExpiresAt: now.Add(time.Hour), RetainUntil: now.Add(2 * time.Hour)}
		if err := s.Create(ctx, elicitation.Request{State: st, Payload: elicitation.Payload{Message: "m"}}, elicitation.AuditEntry{At: now, Action: elicitation.ActionCreated, Principal: owner}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Resolve(ctx, "req-1", elicitation.Resolution{Status: elicitation.StatusDeclined, At: now, By: "reviewer"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *bolt.Tx) error { return tx.DeleteBucket(bucketOwned) }); err != nil {
		t.Fatal(err)
	}
	_ = db.Close()

	s, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, more, err := s.OwnedRequests(ctx, "alice", elicitation.OwnedPosition{}, 10)
	if err != nil || more || len(got) != 2 || got[0].ID != "req-2" || got[1].ID != "req-1" || got[1].Status != elicitation.StatusDeclined {
		t.Fatalf("OwnedRequests after the index was rebuilt = %+v, %v, %v; want req-2 then the declined req-1", got, more, err)
	}
}
