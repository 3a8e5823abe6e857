// Package apikeytest is the contract every apikey.Store passes: one suite,
// run unchanged against the file store and against DynamoDB.
//
//	func TestContract(t *testing.T) {
//		apikeytest.Run(t, func(t *testing.T) (a, b apikey.Store) { ... })
//	}
package apikeytest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/apikey"
)

// Factory opens a fresh, empty store and returns two handles on the same
// data (two clients of one table, two stores on one file).
type Factory func(t *testing.T) (a, b apikey.Store)

// T0 is the creation time of the suite's keys.
var T0 = time.Date(2026, 3, 14, 15, 9, 26, 535_000_000, time.UTC)

// Run runs the whole contract.
func Run(t *testing.T, open Factory) {
	t.Run("PutLookup", func(t *testing.T) { testPutLookup(t, open) })
	t.Run("Conflict", func(t *testing.T) { testConflict(t, open) })
	t.Run("Revoke", func(t *testing.T) { testRevoke(t, open) })
	t.Run("List", func(t *testing.T) { testList(t, open) })
	t.Run("Verify", func(t *testing.T) { testVerify(t, open) })
	t.Run("ConcurrentPuts", func(t *testing.T) { testConcurrentPuts(t, open) })
}

func at(min int) func() time.Time {
	return func() time.Time { return T0.Add(time.Duration(min) * time.Minute) }
}

func create(t *testing.T, s apikey.Store, principal string, o apikey.CreateOptions) (string, apikey.Key) {
	t.Helper()
	o.Principal = principal
	secret, k, err := apikey.Create(context.Background(), s, o)
	if err != nil {
		t.Fatalf("Create(%s): %v", principal, err)
	}
	return secret, k
}

func same(t *testing.T, what string, got, want apikey.Key) {
	t.Helper()
	if got.ID != want.ID || got.Hash != want.Hash || got.Principal != want.Principal || got.Name != want.Name ||
		!got.CreatedAt.Equal(want.CreatedAt) || !got.ExpiresAt.Equal(want.ExpiresAt) || !got.RevokedAt.Equal(want.RevokedAt) {
		t.Errorf("%s = %+v, want %+v", what, got, want)
	}
}

func testPutLookup(t *testing.T, open Factory) {
	ctx := context.Background()
	a, b := open(t)
	secret, k := create(t, a, "alice", apikey.CreateOptions{Name: "laptop", TTL: 90 * 24 * time.Hour, Now: at(0)})
	if k.Hash != apikey.Hash(secret) || k.ID != k.Hash[:16] {
		t.Fatalf("key %+v does not match its secret", k)
	}
	for name, s := range map[string]apikey.Store{"a": a, "b": b} {
		got, err := s.Lookup(ctx, k.Hash)
		if err != nil {
			t.Fatalf("%s.Lookup: %v", name, err)
		}
		same(t, name+".Lookup", got, k)
	}
	if _, err := b.Lookup(ctx, apikey.Hash("elk_nope")); !errors.Is(err, apikey.ErrNotFound) {
		t.Errorf("Lookup(unknown) = %v, want ErrNotFound", err)
	}
}

func testConflict(t *testing.T, open Factory) {
	ctx := context.Background()
	a, b := open(t)
	_, k := create(t, a, "alice", apikey.CreateOptions{Now: at(0)})
	dup := k
	dup.Principal = "mallory"
	if err := b.Put(ctx, dup); !errors.Is(err, apikey.ErrConflict) {
		t.Fatalf("Put(same hash) = %v, want ErrConflict", err)
	}
	got, err := a.Lookup(ctx, k.Hash)
	if err != nil || got.Principal != "alice" {
		t.Fatalf("after a refused Put: Lookup = %+v, %v; want alice's key unchanged", got, err)
	}
}

func testRevoke(t *testing.T, open Factory) {
	ctx := context.Background()
	a, b := open(t)
	secret, k := create(t, a, "alice", apikey.CreateOptions{Now: at(0)})
	_, other := create(t, a, "bob", apikey.CreateOptions{Now: at(1)})
	got, err := b.Revoke(ctx, k.ID, at(5)())
	if err != nil {
		t.Fatalf("Revoke: %v", err)
	}
	want := k
	want.RevokedAt = at(5)()
	same(t, "Revoke", got, want)
	again, err := a.Revoke(ctx, k.ID, at(9)())
	if err != nil {
		t.Fatalf("Revoke again: %v", err)
	}
	same(t, "Revoke again (keeps the first time)", again, want)
	looked, err := a.Lookup(ctx, k.Hash)
	if err != nil {
		t.Fatalf("Lookup(revoked): %v", err)
	}
	same(t, "Lookup(revoked)", looked, want)
	if _, err := apikey.Verify(ctx, a, secret, at(6)()); !errors.Is(err, apikey.ErrInvalid) {
		t.Errorf("Verify(revoked) = %v, want ErrInvalid", err)
	}
	if o, err := a.Lookup(ctx, other.Hash); err != nil || !o.RevokedAt.IsZero() {
		t.Errorf("the other key after a revoke = %+v, %v; want it active", o, err)
	}
	if _, err := b.Revoke(ctx, "0123456789abcdef", at(5)()); !errors.Is(err, apikey.ErrNotFound) {
		t.Errorf("Revoke(unknown) = %v, want ErrNotFound", err)
	}
}

func testList(t *testing.T, open Factory) {
	ctx := context.Background()
	a, b := open(t)
	if keys, err := b.List(ctx); err != nil || len(keys) != 0 {
		t.Fatalf("List(empty) = %v, %v", keys, err)
	}
	var want []apikey.Key
	for i, p := range []string{"carol", "alice", "bob"} {
		_, k := create(t, a, p, apikey.CreateOptions{Name: fmt.Sprint("key ", i), Now: at(i)})
		want = append(want, k)
	}
	r, err := a.Revoke(ctx, want[1].ID, at(10)())
	if err != nil {
		t.Fatal(err)
	}
	want[1] = r
	got, err := b.List(ctx)
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	if len(got) != len(want) {
		t.Fatalf("List = %d keys, want %d", len(got), len(want))
	}
	for i := range want {
		same(t, fmt.Sprintf("List[%d]", i), got[i], want[i])
	}
}

func testVerify(t *testing.T, open Factory) {
	ctx := context.Background()
	a, b := open(t)
	secret, k := create(t, a, "alice", apikey.CreateOptions{TTL: time.Hour, Now: at(0)})
	got, err := apikey.Verify(ctx, b, secret, at(59)())
	if err != nil || got.Principal != "alice" {
		t.Fatalf("Verify(valid) = %+v, %v", got, err)
	}
	same(t, "Verify", got, k)
	if _, err := apikey.Verify(ctx, b, secret, at(60)()); !errors.Is(err, apikey.ErrInvalid) {
		t.Errorf("Verify(at expiry) = %v, want ErrInvalid", err)
	}
	tampered := []byte(secret)
	tampered[10] = map[bool]byte{true: 'b', false: 'a'}[tampered[10] == 'a']
	for _, bad := range []string{"", "elk_", string(tampered), secret + "a", "Bearer " + secret, apikey.Generate()} {
		if _, err := apikey.Verify(ctx, b, bad, at(1)()); !errors.Is(err, apikey.ErrInvalid) {
			t.Errorf("Verify(%q) = %v, want ErrInvalid", bad, err)
		}
	}
}

func testConcurrentPuts(t *testing.T, open Factory) {
	ctx := context.Background()
	a, b := open(t)
	const n = 8
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		s := a
		if i%2 == 1 {
			s = b
		}
		wg.Go(func() {
			_, _, err := apikey.Create(ctx, s, apikey.CreateOptions{Principal: fmt.Sprint("agent-", i), Now: at(i)})
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("concurrent Create: %v", err)
		}
	}
	keys, err := a.List(ctx)
	if err != nil || len(keys) != n {
		t.Fatalf("List after %d concurrent creates = %d keys, %v", n, len(keys), err)
	}
}
