package boltstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// TestEntryCodec: an entry survives the binary form (every field, zero and
// non-zero times, empty lists), a value written as JSON still decodes, and
// a damaged value is an error, never a panic or a huge allocation.
func TestEntryCodec(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 3, 14, 9, 26, 53, 123456789, time.UTC)
	for _, e := range []elicitation.InboxEntry{
		{ID: "a", Kind: elicitation.KindApproval, Owner: "alice", Headline: "Deploy?", CreatedAt: at, ExpiresAt: at.Add(time.Hour)},
		{ID: "b", Kind: elicitation.KindSelection, Owner: "bot", Headline: "Pick … ünïcode", CreatedAt: at, ExpiresAt: at.Add(time.Minute), Approvals: 2,
			Reviewers: []string{"bob@example.com", "group:ops"},
			Approvers: []elicitation.Approval{{By: "bob@example.com", SubmissionID: "r1", At: at.Add(time.Second), AnswerDigest: "d1"}, {By: "sub:x"},
				{By: "eve@example.com", SubmissionID: "r2", AnswerDigest: "d1", For: "carol@example.com"}}},
	} {
		var got elicitation.InboxEntry
		if err := decodeEntry(encodeEntry(e), &got); err != nil || !reflect.DeepEqual(got, e) {
			t.Errorf("round trip of %+v: %+v, %v", e, got, err)
		}
		js, _ := json.Marshal(e)
		var old elicitation.InboxEntry
		if err := decodeEntry(js, &old); err != nil || old.ID != e.ID || !old.ExpiresAt.Equal(e.ExpiresAt) || len(old.Approvers) != len(e.Approvers) {
			t.Errorf("JSON value of %s: %+v, %v", e.ID, old, err)
		}
		full := encodeEntry(e)
		for i := range len(full) {
			var d elicitation.InboxEntry
			if err := decodeEntry(full[:i], &d); !errors.Is(err, errEntryDamaged) {
				t.Errorf("%s cut at %d of %d: %v, want damaged", e.ID, i, len(full), err)
			}
		}
		if err := decodeEntry(append(full, 0), &got); !errors.Is(err, errEntryDamaged) {
			t.Errorf("%s with a trailing byte: %v", e.ID, err)
		}
	}
	// A value of version 1 (approvals without For) still decodes.
	v1 := []byte{1, 1, 'q', 0, 0, 0, 0, 0, 2, 0, 1, 1, 'b', 2, 'r', '1', 0, 2, 'd', '1'}
	var old elicitation.InboxEntry
	if err := decodeEntry(v1, &old); err != nil || len(old.Approvers) != 1 || old.Approvers[0] != (elicitation.Approval{By: "b", SubmissionID: "r1", AnswerDigest: "d1"}) {
		t.Errorf("a version 1 value: %+v, %v", old, err)
	}
	huge := []byte{entryVersion, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x0f}
	var d elicitation.InboxEntry
	if err := decodeEntry(huge, &d); !errors.Is(err, errEntryDamaged) {
		t.Errorf("a damaged count: %v", err)
	}
}

// BenchmarkPendingEntries reads the inbox index of 10,000 pending
// requests, its values in the binary form and, in the same run, as JSON
// (the index's first form), for the ratio.
func BenchmarkPendingEntries(b *testing.B) {
	at := time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)
	for _, form := range []string{"binary", "json"} {
		b.Run(form, func(b *testing.B) {
			s, err := Open(b.TempDir() + "/s.db")
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			err = s.update(context.Background(), "fill", func(tx *bolt.Tx) error {
				for i := range 10000 {
					e := elicitation.InboxEntry{ID: fmt.Sprintf("id-%022d", i), Kind: elicitation.KindApproval, Owner: fmt.Sprintf("agent-%d@example.com", i%13),
						Headline: fmt.Sprintf("Deploy service-%d to production?", i), CreatedAt: at, ExpiresAt: at.Add(time.Duration(600+i) * time.Second)}
					if i%10 == 0 {
						e.Reviewers = []string{"carol@example.com"}
					}
					v := encodeEntry(e)
					if form == "json" {
						v, _ = json.Marshal(e)
					}
					if err := tx.Bucket(bucketPending).Put(pendingKey(e.ExpiresAt, e.ID), v); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for b.Loop() {
				got, err := s.PendingEntries(context.Background(), at, 20001)
				if err != nil || len(got) != 10000 {
					b.Fatalf("%d entries, %v", len(got), err)
				}
			}
		})
	}
}
