package boltstore

import (
	"bufio"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// rssBytes is the process's resident set (VmRSS).
func rssBytes(b *testing.B) int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		b.Skip("no /proc/self/status: ", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	b.Fatal("no VmRSS")
	return 0
}

// BenchmarkOpenLarge opens a store of 100,000 requests, checking the pages
// every call depends on (checkTrees), and reports the time of Open and the
// growth of the process's RSS across it:
//
//	go test ./internal/boltstore -run '^$' -bench OpenLarge -benchtime 3x
func BenchmarkOpenLarge(b *testing.B) {
	const requests = 100_000
	path := filepath.Join(b.TempDir(), "elicitation.db")
	s, err := Open(path)
	if err != nil {
		b.Fatal(err)
	}
	for range requests / 10_000 {
		fill(b, s, 10_000)
	}
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	fi, _ := os.Stat(path)
	b.Logf("%d requests, file %.1f MB", requests, float64(fi.Size())/1e6)
	b.Run("quick", func(b *testing.B) {
		var took time.Duration
		var grew int64
		for range b.N {
			runtime.GC()
			before := rssBytes(b)
			start := time.Now()
			s, err := Open(path)
			took += time.Since(start)
			grew += rssBytes(b) - before
			if err != nil {
				b.Fatal(err)
			}
			_ = s.Close()
		}
		b.ReportMetric(float64(took.Milliseconds())/float64(b.N), "ms/open")
		b.ReportMetric(float64(grew)/1e6/float64(b.N), "MB-RSS/open")
	})
}
