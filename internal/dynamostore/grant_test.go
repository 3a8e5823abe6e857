package dynamostore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/dynamostore"
	"github.com/mcp-elicitation/elicitation/internal/dynamostore/dynamotest"
	"github.com/mcp-elicitation/elicitation/internal/grant"
	"github.com/mcp-elicitation/elicitation/internal/grant/granttest"
)

// TestGrantContract runs the grant contract on DynamoDB Local: each test
// gets a fresh table and two Stores with their own clients on it, each
// with its Grants on the test's clock.
func TestGrantContract(t *testing.T) {
	t.Parallel()
	granttest.Run(t, func(t *testing.T, now func() time.Time) (a, b grant.Store) {
		sa, sb := twoHandles(t)
		return sa.Grants(now), sb.Grants(now)
	})
}

// TestGrantLostResponse: a Put or a Delete whose response is lost after
// it landed is retried by the SDK; the retry meets its own write and the
// call succeeds (not a conflict with itself, not "not found").
func TestGrantLostResponse(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, _, table := dynamotest.Store(t, dynamostore.Options{})
	f := newFaults(nil)
	now := func() time.Time { return granttest.T0 }
	g := dynamostore.New(dynamotest.Client(dynamotest.Endpoint(t), withFaults(f)), table, dynamostore.Options{}).Grants(now)

	f.arm("PutItem", lostResponse)
	r, err := g.Put(ctx, granttest.Record("family", "fam-1", []byte("gen 1"), time.Hour))
	if err != nil {
		t.Fatalf("create, response lost: %v", err)
	}
	f.arm("PutItem", lostResponse)
	r.Data = []byte("gen 2")
	if r, err = g.Put(ctx, r); err != nil {
		t.Fatalf("update, response lost: %v", err)
	}
	if got, err := g.Get(ctx, "family", "fam-1"); err != nil || got.Version != r.Version || string(got.Data) != "gen 2" {
		t.Fatalf("after the updates: %+v, %v; want version %d", got, err, r.Version)
	}
	f.arm("UpdateItem", lostResponse)
	if err := g.Delete(ctx, "family", "fam-1", r.Version); err != nil {
		t.Fatalf("delete, response lost: %v", err)
	}
	if n := f.count("PutItem") + f.count("UpdateItem"); n != 6 || f.disarm() != 0 {
		t.Fatalf("%d write attempts, want 6 (each write sent twice)", n)
	}
	if _, err := g.Get(ctx, "family", "fam-1"); !errors.Is(err, grant.ErrNotFound) {
		t.Fatalf("after Delete: %v, want ErrNotFound", err)
	}
}

// TestGrantTTL: a grant's item carries ttl, its expiry rounded up to the
// second, so DynamoDB's TTL removes it; a Delete leaves a tombstone with
// the same ttl and no data.
func TestGrantTTL(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _, _ := dynamotest.Store(t, dynamostore.Options{})
	g := s.Grants(func() time.Time { return granttest.T0 })
	r, err := g.Put(ctx, granttest.Record("code", "c-ttl", []byte("x"), time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	want := r.Expires.Unix() + 1 // T0 has a fraction of a second
	ttl, hasData, deleted, ok, err := g.GrantItem(ctx, "code", "c-ttl")
	if err != nil || !ok || ttl != want || !hasData || deleted {
		t.Fatalf("stored: ttl %d (want %d), data %v, deleted %v, ok %v, err %v", ttl, want, hasData, deleted, ok, err)
	}
	if err := g.Delete(ctx, "code", "c-ttl", r.Version); err != nil {
		t.Fatal(err)
	}
	ttl, hasData, deleted, ok, err = g.GrantItem(ctx, "code", "c-ttl")
	if err != nil || !ok || ttl != want || hasData || !deleted {
		t.Fatalf("tombstone: ttl %d (want %d), data %v, deleted %v, ok %v, err %v", ttl, want, hasData, deleted, ok, err)
	}
}
