package boltstore

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// TestOpenChecksWhatEveryCallNeeds: Open reads a bounded set of pages (the
// freelist, the bucket roots and their children), not the file; damage
// deeper in a tree is not seen by Open but by Check (elicitation check),
// and the call that reads it fails with an internal error.
func TestOpenChecksWhatEveryCallNeeds(t *testing.T) {
	path := filepath.Join(t.TempDir(), "elicitation.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	ids := fill(t, s, 3000)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := Check(path); err != nil {
		t.Fatalf("Check of a whole store: %v", err)
	}

	read := map[uint64]bool{}
	checkedPage = func(id uint64) { read[id] = true }
	s, err = Open(path)
	checkedPage = nil
	if err != nil {
		t.Fatal(err)
	}
	if err := Check(path); err == nil || !strings.Contains(err.Error(), "open in this process") {
		t.Errorf("Check of a store open in this process: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	pages := fi.Size() / 4096
	if len(read) == 0 || int64(len(read)) > pages/4 {
		t.Fatalf("Open read %d of %d pages", len(read), pages)
	}

	deep := deepLeaf(t, path, read)
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(make([]byte, 4096), int64(deep)*4096); err != nil {
		t.Fatal(err)
	}
	_ = f.Close()

	err = Check(path)
	if !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "its pages are damaged") || !strings.Contains(err.Error(), path) {
		t.Fatalf("Check of a store with page %d zeroed: %v", deep, err)
	}
	s, err = Open(path)
	if err != nil {
		t.Fatalf("Open (which does not read page %d): %v", deep, err)
	}
	defer s.Close()
	failed := 0
	noticed := func(what string, err error) {
		if err != nil {
			if elicitation.CodeOf(err) != elicitation.CodeInternal {
				t.Fatalf("%s over a damaged page: %v is not internal", what, err)
			}
			failed++
		}
	}
	ctx := context.Background()
	for _, id := range ids {
		_, err := s.Load(ctx, id)
		noticed("Load", err)
		_, err = s.Audit(ctx, id)
		noticed("Audit", err)
	}
	_, err = s.Cleanup(ctx, time.Now())
	noticed("Cleanup", err)
	if failed == 0 {
		t.Error("no call noticed the zeroed page")
	}
}

// deepLeaf finds a leaf page in use that Open did not read.
func deepLeaf(t *testing.T, path string, read map[uint64]bool) uint64 {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var found uint64
	err = db.View(func(tx *bolt.Tx) error {
		for id := 2; ; id++ {
			info, err := tx.Page(id)
			if err != nil || info == nil {
				return err
			}
			if info.Type == "leaf" && !read[uint64(id)] && found == 0 {
				found = uint64(id)
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if found == 0 {
		t.Fatal("every leaf page is one Open reads: the store is too small for this test")
	}
	return found
}
