package boltstore

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/elicitation/storetest"
)

// A trail written before the chain (entries without a hash, as a file of
// an earlier version holds them) gets chained entries after it, from seq 1:
// the old entries are the unchained prefix, sorted by time as before, and
// the trail verifies.
func TestChainAfterUnchainedEntries(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, err := Open(filepath.Join(t.TempDir(), "elicitation.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r := storetest.NewApproval(t, time.Hour)
	if err := s.Create(ctx, r, elicitation.AuditEntry{At: storetest.T0, Action: elicitation.ActionCreated, Principal: "alice"}); err != nil {
		t.Fatal(err)
	}
	id := r.State.ID
	// Replace the trail with two old entries, the later one stored first.
	err = s.db.bolt.Update(func(tx *bolt.Tx) error {
		audit := tx.Bucket(bucketAudit)
		if err := audit.DeleteBucket([]byte(id)); err != nil {
			return err
		}
		b, err := audit.CreateBucket([]byte(id))
		if err != nil {
			return err
		}
		for i, at := range []time.Duration{2 * time.Second, time.Second} {
			v, _ := json.Marshal(elicitation.AuditEntry{At: storetest.T0.Add(at), Action: elicitation.ActionRendered, Principal: "old"})
			if err := b.Put(binary.BigEndian.AppendUint64(nil, uint64(i+1)), v); err != nil {
				return err
			}
		}
		return b.SetSequence(2) // as NextSequence left it
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Append(ctx, id, elicitation.AuditEntry{At: storetest.T0, Action: elicitation.ActionPushed, Principal: "alice"}); err != nil {
		t.Fatal(err)
	}
	tr, err := s.Audit(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	check, err := elicitation.VerifyAudit(id, tr.Entries)
	if err != nil || check.Unchained != 2 || check.Chained != 1 || check.Head.Seq != 1 {
		t.Fatalf("VerifyAudit = %+v, %v", check, err)
	}
	if e := tr.Entries; !e[0].At.Before(e[1].At) || e[2].Action != elicitation.ActionPushed || e[2].Prev != "" {
		t.Errorf("trail %+v", e)
	}
}
