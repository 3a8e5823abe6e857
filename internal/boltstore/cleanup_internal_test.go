package boltstore

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/elicitation/storetest"
)

// fill stores n requests that expire together (their retention ends within
// n ms before an hour after T0), in one transaction, and returns their ids.
func fill(t testing.TB, s *Store, n int) []string {
	t.Helper()
	ids := make([]string, n)
	err := s.db.bolt.Update(func(tx *bolt.Tx) error {
		for i := range ids {
			r := storetest.NewSelection(t, 20, time.Minute)
			// Retention ends in creation order, as it does for requests
			// created one after another (not in the order of their ids).
			r.State.RetainUntil = storetest.T0.Add(time.Hour - time.Duration(n-i)*time.Millisecond)
			ids[i] = r.State.ID
			if err := putJSON(tx, bucketState, r.State.ID, r.State); err != nil {
				return err
			}
			if err := putJSON(tx, bucketPayload, r.State.ID, r.Payload); err != nil {
				return err
			}
			if err := tx.Bucket(bucketRetain).Put(retainKey(r.State), nil); err != nil {
				return err
			}
			e := elicitation.AuditEntry{At: storetest.T0, Action: elicitation.ActionCreated, Principal: "alice"}
			if err := appendAudit(tx, r.State.ID, e); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// TestCleanupInBatches: cleanup removes what is due in bounded
// transactions, and a create waiting for the store goes between them
// instead of after the whole cleanup.
func TestCleanupInBatches(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "elicitation.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	n := 3*CleanupBatch + 7
	ids := fill(t, s, n)
	live := storetest.NewApproval(t, 24*time.Hour)
	batches := 0
	afterCleanupBatch = func() {
		batches++
		if batches == 1 {
			// Between two batches the store takes other writes at once.
			if err := s.Create(ctx, live, elicitation.AuditEntry{At: storetest.T0, Action: elicitation.ActionCreated, Principal: "alice"}); err != nil {
				t.Errorf("Create between cleanup batches: %v", err)
			}
		}
	}
	defer func() { afterCleanupBatch = nil }()
	removed, err := s.Cleanup(ctx, storetest.T0.Add(2*time.Hour))
	if err != nil || removed != n {
		t.Fatalf("Cleanup = %d, %v; want %d", removed, err, n)
	}
	if batches != n/CleanupBatch {
		t.Errorf("%d batches, want %d", batches, n/CleanupBatch)
	}
	for _, id := range []string{ids[0], ids[n/2], ids[n-1]} {
		if _, err := s.State(ctx, id); !errors.Is(err, elicitation.ErrNotFound) {
			t.Errorf("State of a removed request: %v", err)
		}
	}
	if _, err := s.State(ctx, live.State.ID); err != nil {
		t.Errorf("the request created during cleanup: %v", err)
	}
	// A cleanup whose context ends stops between batches with what it did.
	fill(t, s, 2*CleanupBatch)
	cctx, cancel := context.WithCancel(ctx)
	afterCleanupBatch = cancel
	removed, err = s.Cleanup(cctx, storetest.T0.Add(2*time.Hour))
	if !errors.Is(err, context.Canceled) || removed != CleanupBatch {
		t.Errorf("canceled Cleanup = %d, %v; want %d and context.Canceled", removed, err, CleanupBatch)
	}
}

// TestCompact: after a cleanup the file keeps its size; Compact shrinks it
// to what is live, keeps every live request readable, and refuses a store
// that is open.
func TestCompact(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "elicitation.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	fill(t, s, 2000)
	live := storetest.NewApproval(t, 24*time.Hour)
	if err := s.Create(ctx, live, elicitation.AuditEntry{At: storetest.T0, Action: elicitation.ActionCreated, Principal: "alice"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Cleanup(ctx, storetest.T0.Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Compact(path); err == nil || !strings.Contains(err.Error(), "open") {
		t.Errorf("Compact of an open store: %v, want a refusal", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	before, after, err := Compact(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(path); fi == nil || fi.Size() != after || after*4 > before {
		t.Errorf("Compact: %d -> %d bytes, want the file at least 4x smaller", before, after)
	}
	if _, err := os.Stat(path + ".compacting"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the temporary file is left behind: %v", err)
	}
	s, err = Open(path)
	if err != nil {
		t.Fatalf("Open after Compact: %v", err)
	}
	defer s.Close()
	rec, err := s.Load(ctx, live.State.ID)
	if err != nil || rec.Payload.Message != live.Payload.Message {
		t.Errorf("live request after Compact: %+v, %v", rec.State, err)
	}
	tr, err := s.Audit(ctx, live.State.ID)
	if err != nil || len(tr.Entries) != 1 {
		t.Errorf("audit after Compact: %+v, %v", tr, err)
	}
}

// BenchmarkCleanupWhileCreating removes 100,000 expired requests while
// creates keep arriving, and reports the longest a create waited, the
// cleanup's time and the file before and after compaction:
//
//	go test ./internal/boltstore -run '^$' -bench CleanupWhileCreating -benchtime 1x
func BenchmarkCleanupWhileCreating(b *testing.B) {
	for range b.N {
		b.StopTimer()
		path := filepath.Join(b.TempDir(), "elicitation.db")
		s, err := Open(path)
		if err != nil {
			b.Fatal(err)
		}
		ctx := context.Background()
		for range 10 {
			fill(b, s, 10000)
		}
		grown := fileSize(b, path)
		var before runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		b.StartTimer()
		var peak uint64
		stopPeak := make(chan struct{})
		peaked := make(chan struct{})
		go func() {
			defer close(peaked)
			var m runtime.MemStats
			for {
				select {
				case <-stopPeak:
					return
				case <-time.After(20 * time.Millisecond):
					runtime.ReadMemStats(&m)
					peak = max(peak, m.HeapInuse)
				}
			}
		}()
		done := make(chan time.Duration)
		go func() {
			start := time.Now()
			if _, err := s.Cleanup(ctx, storetest.T0.Add(2*time.Hour)); err != nil {
				b.Error(err)
			}
			done <- time.Since(start)
		}()
		var waits []time.Duration
		var took time.Duration
	creating:
		for {
			select {
			case took = <-done:
				break creating
			default:
			}
			r := storetest.NewApproval(b, time.Hour)
			start := time.Now()
			if err := s.Create(ctx, r, elicitation.AuditEntry{At: storetest.T0, Action: elicitation.ActionCreated, Principal: "alice"}); err != nil {
				b.Fatal(err)
			}
			waits = append(waits, time.Since(start))
		}
		b.StopTimer()
		close(stopPeak)
		<-peaked
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
		_, compacted, err := Compact(path)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(took.Seconds(), "cleanup-s")
		b.ReportMetric(float64(len(waits)), "creates-during")
		b.ReportMetric(float64(slices.Max(waits).Milliseconds()), "max-create-wait-ms")
		b.ReportMetric(float64(peak-min(peak, before.HeapInuse))/(1<<20), "peak-heap-growth-MB")
		b.ReportMetric(float64(grown)/(1<<20), "file-MB")
		b.ReportMetric(float64(compacted)/(1<<20), "compacted-MB")
	}
}

func fileSize(t testing.TB, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}
