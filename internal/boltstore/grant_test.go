package boltstore_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/boltstore"
	"github.com/mcp-elicitation/elicitation/internal/grant"
	"github.com/mcp-elicitation/elicitation/internal/grant/granttest"
)

// TestGrantContract runs the grant contract on the embedded store: two
// opens of one file, each with its Grants on the test's clock.
func TestGrantContract(t *testing.T) {
	t.Parallel()
	granttest.Run(t, func(t *testing.T, now func() time.Time) (a, b grant.Store) {
		path := filepath.Join(t.TempDir(), "store.db")
		return open(t, path).Grants(now), open(t, path).Grants(now)
	})
}

// TestGrantsDurable: grants outlive the handle, a reopen and a Compact.
func TestGrantsDurable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "store.db")
	s, err := boltstore.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	now := func() time.Time { return granttest.T0 }
	r, err := s.Grants(now).Put(ctx, granttest.Record("family", "fam-1", []byte("kept"), time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := boltstore.Compact(path); err != nil {
		t.Fatal(err)
	}
	got, err := open(t, path).Grants(now).Get(ctx, "family", "fam-1")
	if err != nil || got.Version != r.Version || string(got.Data) != "kept" {
		t.Fatalf("after reopen and compact: %+v, %v", got, err)
	}
}
