package boltstore

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/elicitation/storetest"
)

// queued waits until n writes wait in g's queue (the committer is held).
func queued(g *groupCommit, n int) {
	for {
		g.mu.Lock()
		l := len(g.queue)
		g.mu.Unlock()
		if l >= n {
			return
		}
		runtime.Gosched()
	}
}

// TestGroupCommitIsolatesFailure: writes that queue behind a commit land
// together in one transaction; when one of them fails, nothing of it is
// kept, its caller gets its error, and every other caller's write is on
// disk when its call returns.
func TestGroupCommitIsolatesFailure(t *testing.T) {
	t.Parallel()
	s, err := Open(filepath.Join(t.TempDir(), "elicitation.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sh := s.db
	run := func(f func(*bolt.Tx) error) error { return sh.commit("write", f) }
	bucket := []byte("t")
	if err := sh.bolt.Update(func(tx *bolt.Tx) error { _, err := tx.CreateBucket(bucket); return err }); err != nil {
		t.Fatal(err)
	}

	release := make(chan struct{})
	first := make(chan error, 1)
	go func() {
		first <- sh.group.do(run, func(tx *bolt.Tx) error {
			<-release // hold the committer while the others queue
			return tx.Bucket(bucket).Put([]byte("first"), nil)
		})
	}()
	queued(&sh.group, 0)
	for !func() bool { sh.group.mu.Lock(); defer sh.group.mu.Unlock(); return sh.group.busy }() {
		runtime.Gosched()
	}

	const n, bad = 50, 7
	errBad := errors.New("bad write")
	var runs [n]atomic.Int32
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = sh.group.do(run, func(tx *bolt.Tx) error {
				runs[i].Add(1)
				if err := tx.Bucket(bucket).Put(fmt.Appendf(nil, "k%d", i), nil); err != nil {
					return err
				}
				if i == bad {
					return errBad
				}
				return nil
			})
		}()
	}
	queued(&sh.group, n)
	close(release)
	wg.Wait()
	if err := <-first; err != nil {
		t.Fatal(err)
	}

	err = sh.bolt.View(func(tx *bolt.Tx) error {
		for i := range n {
			got := tx.Bucket(bucket).Get(fmt.Appendf(nil, "k%d", i)) != nil
			switch {
			case i == bad && (got || !errors.Is(errs[i], errBad)):
				t.Errorf("failing write: kept %v, error %v", got, errs[i])
			case i != bad && (!got || errs[i] != nil):
				t.Errorf("write %d: kept %v, error %v", i, got, errs[i])
			}
			// The failing write ran in the batch, then alone after the batch
			// failed; the others ran alone, after running in the batch if
			// they came before it.
			if r := runs[i].Load(); (i == bad && r != 2) || r < 1 || r > 2 {
				t.Errorf("write %d ran %d times", i, r)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestResolveInBatches: many decisions at once, some of them refusals
// (unknown ids, a second decision of one request), each get the outcome
// they would get alone, and each decision is in the store.
func TestResolveInBatches(t *testing.T) {
	t.Parallel()
	s, err := Open(filepath.Join(t.TempDir(), "elicitation.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ids := fill(t, s, 300)
	ctx := context.Background()
	res := func(i int) elicitation.Resolution {
		return elicitation.Resolution{Status: elicitation.StatusDeclined, SubmissionID: fmt.Sprintf("s%d", i), At: storetest.T0, By: "reviewer"}
	}
	var wg sync.WaitGroup
	errs := make([]error, 3*len(ids))
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			switch i % 3 {
			case 0: // the decision
				_, errs[i] = s.Resolve(ctx, ids[i/3], res(i/3))
			case 1: // an unknown request
				_, errs[i] = s.Resolve(ctx, "missing-"+ids[i/3], res(i/3))
			case 2: // a second, different decision of the same request
				_, errs[i] = s.Resolve(ctx, ids[i/3], res(-i))
			}
		}()
	}
	wg.Wait()
	for i, id := range ids {
		if !errors.Is(errs[3*i+1], elicitation.ErrNotFound) {
			t.Errorf("unknown id: %v, want not found", errs[3*i+1])
		}
		a, b := errs[3*i], errs[3*i+2]
		if (a == nil) == (b == nil) || elicitation.CodeOf(errors.Join(a, b)) != elicitation.CodeConflict {
			t.Errorf("%s: two decisions gave %v and %v, want one decided and one conflict", id, a, b)
		}
		st, err := s.State(ctx, id)
		if err != nil || st.Status != elicitation.StatusDeclined {
			t.Errorf("%s after the batch: %+v, %v", id, st.Status, err)
		}
	}
}

// BenchmarkDecideMany decides 10,000 pending requests from 1,000
// goroutines at once, with group commit:
//
//	go test ./internal/boltstore -run '^$' -bench DecideMany -benchtime 1x
func BenchmarkDecideMany(b *testing.B) {
	const requests, workers = 10_000, 1_000
	b.Run("batched", func(b *testing.B) {
		for range b.N {
			b.StopTimer()
			s, err := Open(filepath.Join(b.TempDir(), "elicitation.db"))
			if err != nil {
				b.Fatal(err)
			}
			ids := fill(b, s, requests)
			ctx := context.Background()
			b.StartTimer()
			start := time.Now()
			var wg sync.WaitGroup
			var failed atomic.Int32
			for w := range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := w; i < requests; i += workers {
						r := elicitation.Resolution{Status: elicitation.StatusDeclined, SubmissionID: "s", At: storetest.T0, By: "reviewer"}
						if _, err := s.Resolve(ctx, ids[i], r); err != nil {
							failed.Add(1)
						}
					}
				}()
			}
			wg.Wait()
			b.ReportMetric(time.Since(start).Seconds(), "s/10k-decisions")
			b.StopTimer()
			if failed.Load() != 0 {
				b.Fatalf("%d decisions failed", failed.Load())
			}
			_ = s.Close()
		}
	})
}
