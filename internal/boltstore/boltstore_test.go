package boltstore_test

import (
	"context"
	"time"

	"path/filepath"
	"testing"

	"github.com/mcp-elicitation/elicitation/internal/boltstore"
	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/elicitation/storetest"
)

func open(t *testing.T, path string) *boltstore.Store {
	t.Helper()
	s, err := boltstore.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestContract(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) (a, b elicitation.Store) {
		path := filepath.Join(t.TempDir(), "store.db")
		return open(t, path), open(t, path)
	})
}

func TestDurableAcrossReopen(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "store.db")
	s, err := boltstore.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	r := storetest.NewApproval(t, time.Hour)
	ctx := context.Background()
	if err := s.Create(ctx, r, elicitation.AuditEntry{At: storetest.T0, Action: elicitation.ActionCreated, Principal: "alice"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Resolve(ctx, r.State.ID, elicitation.Resolution{Status: elicitation.StatusDeclined, SubmissionID: "s", At: storetest.T0, By: "reviewer"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = open(t, path)
	st, err := s.State(ctx, r.State.ID)
	if err != nil || st.Status != elicitation.StatusDeclined {
		t.Fatalf("after reopen: %+v, %v", st, err)
	}
}

func TestHandlesShareOneFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "store.db")
	a := open(t, path)
	b := open(t, path)
	// Closing one handle leaves the other usable.
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	r := storetest.NewApproval(t, time.Hour)
	if err := b.Create(context.Background(), r, elicitation.AuditEntry{At: storetest.T0, Action: elicitation.ActionCreated, Principal: "alice"}); err != nil {
		t.Fatalf("Create through the remaining handle: %v", err)
	}
}
