package boltstore_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/mcp-elicitation/elicitation/internal/boltstore"
	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/elicitation/storetest"
)

const pageSize = 4096 // bbolt's page size on the machines we run on (os.Getpagesize)

// filled writes a store with n requests (a few hundred pages) and closes
// it, returning its path and the ids.
func filled(t *testing.T, n int) (string, []string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "elicitation.db")
	s, err := boltstore.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]string, n)
	for i := range ids {
		r := storetest.NewSelection(t, 40, time.Hour)
		if err := s.Create(context.Background(), r, elicitation.AuditEntry{At: storetest.T0, Action: elicitation.ActionCreated, Principal: "alice"}); err != nil {
			t.Fatal(err)
		}
		ids[i] = r.State.ID
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return path, ids
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

func zeroPages(t *testing.T, path string, from, to int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(make([]byte, (to-from)*pageSize), from*pageSize); err != nil {
		t.Fatal(err)
	}
}

// leafPage finds a leaf page in use (holding requests) in the file at path.
func leafPage(t *testing.T, path string) int64 {
	t.Helper()
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var found int64
	err = db.Update(func(tx *bolt.Tx) error {
		for id := 2; ; id++ {
			info, err := tx.Page(id)
			if err != nil || info == nil {
				return err
			}
			if info.Type == "leaf" {
				found = int64(id)
			}
		}
	})
	if err != nil || found == 0 {
		t.Fatalf("no leaf page in use: %v", err)
	}
	return found
}

// TestOpenRefusesDamagedFile: a damaged file is refused by Open with one
// sentence naming what is wrong, the file and how to restore it; bbolt
// never maps a truncated file (which faulted with SIGBUS) and never serves a
// file whose pages are inconsistent (which panicked later).
func TestOpenRefusesDamagedFile(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, path string)
		want   string
	}{
		{"page-aligned truncation", func(t *testing.T, path string) {
			if err := os.Truncate(path, fileSize(t, path)/pageSize/2*pageSize); err != nil {
				t.Fatal(err)
			}
		}, "truncated"},
		{"truncation inside a page", func(t *testing.T, path string) {
			if err := os.Truncate(path, fileSize(t, path)/pageSize/2*pageSize+1000); err != nil {
				t.Fatal(err)
			}
		}, "truncated"},
		{"zeroed data pages", func(t *testing.T, path string) {
			zeroPages(t, path, 4, fileSize(t, path)/pageSize/2)
		}, "its pages are damaged"},
		{"one zeroed leaf page", func(t *testing.T, path string) {
			p := leafPage(t, path)
			zeroPages(t, path, p, p+1)
		}, "its pages are damaged"},
		{"zeroed header", func(t *testing.T, path string) { zeroPages(t, path, 0, 2) }, "header"},
		{"not a store", func(t *testing.T, path string) {
			if err := os.WriteFile(path, []byte(strings.Repeat("not a database\n", 1000)), 0o600); err != nil {
				t.Fatal(err)
			}
		}, "not a store file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path, _ := filled(t, 200)
			tc.damage(t, path)
			s, err := boltstore.Open(path)
			if err == nil {
				_ = s.Close()
				t.Fatal("Open accepted a damaged file")
			}
			msg := err.Error()
			if !errors.Is(err, boltstore.ErrDamaged) || !strings.Contains(msg, path) || !strings.Contains(msg, tc.want) ||
				!strings.Contains(msg, "restore it from a backup") || strings.Count(msg, ". ") > 0 || strings.Contains(msg, "\n") {
				t.Errorf("Open error is not one sentence saying %q, the file and how to restore:\n%s", tc.want, msg)
			}
			// The file is left as it was found, and a fresh path still opens.
			fresh := open(t, filepath.Join(t.TempDir(), "elicitation.db"))
			if _, err := fresh.Cleanup(context.Background(), time.Now()); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestDamageWhileOpen: damage that happens to an open store (pages
// overwritten, the file cut short under the mapping) fails the calls that
// touch it with an error, never a panic or a fault that ends the process;
// the other handles' calls keep working once the damage is gone.
func TestDamageWhileOpen(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, path string)
	}{
		{"zeroed pages", func(t *testing.T, path string) { zeroPages(t, path, 2, fileSize(t, path)/pageSize) }},
		{"truncated under the mapping", func(t *testing.T, path string) {
			if err := os.Truncate(path, 3*pageSize); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path, ids := filled(t, 200)
			s := open(t, path)
			ctx := context.Background()
			if _, err := s.State(ctx, ids[0]); err != nil {
				t.Fatalf("State before damage: %v", err)
			}
			tc.damage(t, path)
			calls := map[string]func() error{
				"State":   func() error { _, err := s.State(ctx, ids[len(ids)-1]); return err },
				"Load":    func() error { _, err := s.Load(ctx, ids[len(ids)/2]); return err },
				"Audit":   func() error { _, err := s.Audit(ctx, ids[1]); return err },
				"Cleanup": func() error { _, err := s.Cleanup(ctx, storetest.T0.Add(30*24*time.Hour)); return err },
				"Create": func() error {
					r := storetest.NewApproval(t, time.Hour)
					return s.Create(ctx, r, elicitation.AuditEntry{At: storetest.T0, Action: elicitation.ActionCreated, Principal: "alice"})
				},
			}
			failed := 0
			for name, call := range calls {
				err := call()
				if err == nil {
					continue
				}
				failed++
				if elicitation.CodeOf(err) != elicitation.CodeInternal {
					t.Errorf("%s on a damaged store: %v is %s, want internal", name, err, elicitation.CodeOf(err))
				}
			}
			if failed == 0 {
				t.Error("no call noticed the damage")
			}
		})
	}
}
