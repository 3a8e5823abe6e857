package boltstore

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/mcp-elicitation/elicitation/internal/elicitation/storetest"
)

// wchar is how many bytes the process has written with write system calls
// (/proc/self/io), which is how bbolt writes its pages.
func wchar(b *testing.B) int64 {
	f, err := os.Open("/proc/self/io")
	if err != nil {
		b.Skip("no /proc/self/io: ", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "wchar: "); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	b.Fatal("no wchar in /proc/self/io")
	return 0
}

// liveBytes is the size of every key and value the store holds.
func liveBytes(b *testing.B, s *Store) int64 {
	var n int64
	var walk func(bk *bolt.Bucket)
	walk = func(bk *bolt.Bucket) {
		_ = bk.ForEach(func(k, v []byte) error {
			n += int64(len(k) + len(v))
			if v == nil {
				if sub := bk.Bucket(k); sub != nil {
					walk(sub)
				}
			}
			return nil
		})
	}
	err := s.db.bolt.View(func(tx *bolt.Tx) error {
		return tx.ForEach(func(_ []byte, bk *bolt.Bucket) error { walk(bk); return nil })
	})
	if err != nil {
		b.Fatal(err)
	}
	return n
}

// BenchmarkCleanupWrites removes 100,000 expired requests (in the order of
// their ids, CleanupRound at a time) and reports what the process wrote
// against what was removed:
//
//	go test ./internal/boltstore -run '^$' -bench CleanupWrites -benchtime 1x
func BenchmarkCleanupWrites(b *testing.B) {
	b.Run("id-order", func(b *testing.B) {
		for range b.N {
			b.StopTimer()
			path := filepath.Join(b.TempDir(), "elicitation.db")
			s, err := Open(path)
			if err != nil {
				b.Fatal(err)
			}
			for range 10 {
				fill(b, s, 10_000)
			}
			file := fileSize(b, path)
			live := liveBytes(b, s)
			b.StartTimer()
			before := wchar(b)
			n, err := s.Cleanup(context.Background(), storetest.T0.Add(2*time.Hour))
			written := wchar(b) - before
			b.StopTimer()
			if err != nil || n != 100_000 {
				b.Fatalf("Cleanup = %d, %v", n, err)
			}
			removed := live - liveBytes(b, s)
			_ = s.Close()
			b.ReportMetric(float64(file)/1e6, "file-MB")
			b.ReportMetric(float64(removed)/1e6, "removed-MB")
			b.ReportMetric(float64(written)/1e6, "written-MB")
			b.ReportMetric(float64(written)/float64(removed), "written/removed")
		}
	})
}
