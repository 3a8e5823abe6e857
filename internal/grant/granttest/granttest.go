// Package granttest is the contract every grant.Store passes, run
// unchanged against the embedded store, DynamoDB and Memory (the fake for
// other packages' tests):
//
//	func TestGrantContract(t *testing.T) {
//		granttest.Run(t, func(t *testing.T, now func() time.Time) (a, b grant.Store) { ... })
//	}
//
// Decided here, beyond grant.Store's own words: a Put over a version when
// no live record is stored (it never existed, was deleted or expired) is
// ErrConflict, as the stored version is "none"; a Delete then is
// ErrNotFound. Versions are never reused for a kind and id, so a writer
// holding the version of a record that expired or was deleted loses
// against the record written since.
package granttest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/grant"
	"github.com/mcp-elicitation/elicitation/internal/testclock"
	"github.com/mcp-elicitation/elicitation/internal/testenv"
)

// Factory opens a fresh, empty store that judges expiry by now and
// returns two handles on the same data (two clients of one table, two
// opens of one file), closed by t.Cleanup.
type Factory func(t *testing.T, now func() time.Time) (a, b grant.Store)

// T0 is where each test's clock starts.
var T0 = time.Date(2026, 3, 14, 15, 9, 26, 535_897_932, time.UTC)

// Concurrency is how many writers race in the concurrent tests.
const Concurrency = 16

// Run runs the whole contract, its tests in parallel (each opens its own
// store on its own clock).
func Run(t *testing.T, open Factory) {
	for _, c := range []struct {
		name string
		test func(*testing.T, *testclock.Clock, grant.Store, grant.Store)
	}{
		{"RoundTrip", testRoundTrip}, {"CreateConflict", testCreateConflict},
		{"Update", testUpdate}, {"Delete", testDelete}, {"Expiry", testExpiry},
		{"Recreate", testRecreate}, {"Invalid", testInvalid}, {"InvalidKey", testInvalidKey},
		{"KindsIsolate", testKindsIsolate}, {"DataIsCopied", testDataIsCopied},
		{"ContextEnded", testContextEnded}, {"ConcurrentPuts", testConcurrentPuts},
		{"ConcurrentCreates", testConcurrentCreates}, {"ConcurrentRedeem", testConcurrentRedeem},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			clk := testclock.New(T0)
			a, b := open(t, clk.Now)
			c.test(t, clk, a, b)
		})
	}
}

// Record returns a valid record of kind and id holding data, expiring
// after ttl from T0.
func Record(kind, id string, data []byte, ttl time.Duration) grant.Record {
	return grant.Record{Kind: kind, ID: id, Data: data, Expires: T0.Add(ttl)}
}

// ctxT is a case's context (testenv.Context).
func ctxT(t *testing.T) context.Context { return testenv.Context(t) }

func put(t *testing.T, s grant.Store, r grant.Record) grant.Record {
	t.Helper()
	got, err := s.Put(ctxT(t), r)
	if err != nil {
		t.Fatalf("Put %s (version %d): %v", r.Kind, r.Version, err)
	}
	if got.Version == 0 || got.Version == r.Version {
		t.Fatalf("Put %s: version %d after %d, want a new non-zero one", r.Kind, got.Version, r.Version)
	}
	return got
}

func wantErr(t *testing.T, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("%s: err = %v, want %v", what, err, target)
	}
}

// same fails t unless s holds exactly want (Get through s).
func same(t *testing.T, what string, s grant.Store, want grant.Record) {
	t.Helper()
	got, err := s.Get(ctxT(t), want.Kind, want.ID)
	if err != nil {
		t.Fatalf("%s: Get: %v", what, err)
	}
	if got.Kind != want.Kind || got.ID != want.ID || got.Version != want.Version ||
		!got.Expires.Equal(want.Expires) || !bytes.Equal(got.Data, want.Data) {
		t.Fatalf("%s: Get = %s\nwant %s", what, describe(got), describe(want))
	}
}

// gone fails t unless s has no live record of kind and id.
func gone(t *testing.T, what string, s grant.Store, kind, id string) {
	t.Helper()
	_, err := s.Get(ctxT(t), kind, id)
	wantErr(t, what+": Get", err, grant.ErrNotFound)
}

func describe(r grant.Record) string {
	d := fmt.Sprintf("%x", r.Data)
	if len(d) > 64 {
		d = fmt.Sprintf("%s… (%d bytes)", d[:64], len(r.Data))
	}
	return fmt.Sprintf("{%s %.40q v%d expires %s data %s}", r.Kind, r.ID, r.Version, r.Expires.UTC().Format(time.RFC3339Nano), d)
}

// pattern is n bytes of every value, in a varying order.
func pattern(n int) []byte {
	b := make([]byte, n)
	x := uint32(2463534242)
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x)
	}
	return b
}

// testRoundTrip: a record written through one handle reads back through
// the other, byte for byte, for every shape of kind, id and data.
func testRoundTrip(t *testing.T, _ *testclock.Clock, a, b grant.Store) {
	every := make([]byte, 256)
	for i := range every {
		every[i] = byte(i)
	}
	for _, c := range []struct {
		name string
		r    grant.Record
	}{
		{"small", Record("code", "c-1", []byte(`{"client":"x","pkce":"S256"}`), time.Minute)},
		{"no data", Record("login", "l-1", nil, time.Minute)},
		{"every byte value", Record("family", "f-1", every, time.Hour)},
		{"MaxData bytes", Record("client", "big", pattern(grant.MaxData), 24*time.Hour)},
		{"a URL id", Record("client", "https://app.example.com/oauth/client.json?v=2&x=%20#frag", []byte("m"), time.Hour)},
		{"longest id and kind", Record(strings.Repeat("k", grant.MaxKind), strings.Repeat("~", grant.MaxID), []byte("x"), time.Hour)},
		{"one-byte kind and id", Record("a", "!", []byte{0}, time.Hour)},
		{"expiry with nanoseconds", Record("code", "c-2", []byte("n"), time.Hour+123_456_789*time.Nanosecond)},
		{"expiry far ahead", Record("family", "f-2", []byte("y"), 200*365*24*time.Hour)},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := put(t, a, c.r)
			if got.Kind != c.r.Kind || got.ID != c.r.ID || !got.Expires.Equal(c.r.Expires) || !bytes.Equal(got.Data, c.r.Data) {
				t.Fatalf("Put returned %s, want %s with a version", describe(got), describe(c.r))
			}
			same(t, "other handle", b, got)
			same(t, "same handle", a, got)
		})
	}
	gone(t, "never written", a, "code", "c-404")
}

// testCreateConflict: a create (version 0) over a live record conflicts,
// through either handle, and changes nothing.
func testCreateConflict(t *testing.T, _ *testclock.Clock, a, b grant.Store) {
	first := put(t, a, Record("client", "dcr-1", []byte("first"), time.Hour))
	for _, s := range []grant.Store{a, b} {
		_, err := s.Put(ctxT(t), Record("client", "dcr-1", []byte("second"), 2*time.Hour))
		wantErr(t, "second create", err, grant.ErrConflict)
	}
	same(t, "after refused creates", b, first)
}

// testUpdate: a Put over the version read lands and gives a new version;
// over any other version it conflicts and changes nothing.
func testUpdate(t *testing.T, clk *testclock.Clock, a, b grant.Store) {
	v1 := put(t, a, Record("family", "fam-1", []byte("gen 1"), time.Hour))
	next := v1
	next.Data, next.Expires = []byte("gen 2"), T0.Add(2*time.Hour)
	v2 := put(t, b, next)
	same(t, "after update", a, v2)
	for _, c := range []struct {
		name    string
		version int64
	}{
		{"the version before", v1.Version}, {"create (0)", 0}, {"a neighbour", v2.Version ^ 1},
	} {
		stale := v2
		stale.Version, stale.Data = c.version, []byte("stale: "+c.name)
		_, err := a.Put(ctxT(t), stale)
		wantErr(t, "Put over "+c.name, err, grant.ErrConflict)
	}
	same(t, "after refused updates", b, v2)
	// An update may shorten the expiry; the shorter one holds.
	short := v2
	short.Expires = T0.Add(time.Minute)
	v3 := put(t, a, short)
	clk.Set(T0.Add(time.Minute))
	gone(t, "after the shortened expiry", b, "family", "fam-1")
	_, err := b.Put(ctxT(t), v3)
	wantErr(t, "Put over the expired version", err, grant.ErrConflict)
	// A Put over a version when none was ever stored conflicts.
	_, err = a.Put(ctxT(t), grant.Record{Kind: "family", ID: "fam-none", Data: []byte("x"), Expires: T0.Add(time.Hour), Version: v1.Version})
	wantErr(t, "Put over a version of nothing", err, grant.ErrConflict)
	gone(t, "after a refused Put over nothing", b, "family", "fam-none")
}

// testDelete: Delete removes only the version read; another version
// conflicts and keeps the record; nothing stored is ErrNotFound.
func testDelete(t *testing.T, _ *testclock.Clock, a, b grant.Store) {
	r := put(t, a, Record("code", "code-1", []byte("redeem me"), time.Minute))
	for _, c := range []struct {
		name    string
		version int64
	}{{"0", 0}, {"a neighbour", r.Version ^ 1}} {
		err := b.Delete(ctxT(t), "code", "code-1", c.version)
		wantErr(t, "Delete of version "+c.name, err, grant.ErrConflict)
	}
	same(t, "after refused deletes", a, r)
	if err := b.Delete(ctxT(t), "code", "code-1", r.Version); err != nil {
		t.Fatalf("Delete of the version read: %v", err)
	}
	gone(t, "after Delete", a, "code", "code-1")
	err := a.Delete(ctxT(t), "code", "code-1", r.Version)
	wantErr(t, "second Delete", err, grant.ErrNotFound)
	err = a.Delete(ctxT(t), "code", "never", 1)
	wantErr(t, "Delete of a record never written", err, grant.ErrNotFound)
}

// testExpiry: a record lives until just before Expires; at Expires it is
// gone for Get and Delete, a Put over its version conflicts, and a create
// (version 0) takes its place with a new version.
func testExpiry(t *testing.T, clk *testclock.Clock, a, b grant.Store) {
	r := put(t, a, Record("login", "login-1", []byte("state"), time.Minute))
	clk.Set(r.Expires.Add(-time.Nanosecond))
	same(t, "a nanosecond before expiry", b, r)
	clk.Set(r.Expires)
	gone(t, "at expiry", b, "login", "login-1")
	gone(t, "at expiry, other handle", a, "login", "login-1")
	upd := r
	upd.Expires = r.Expires.Add(time.Hour)
	_, err := b.Put(ctxT(t), upd)
	wantErr(t, "Put over the expired record's version", err, grant.ErrConflict)
	err = b.Delete(ctxT(t), "login", "login-1", r.Version)
	wantErr(t, "Delete of the expired record", err, grant.ErrNotFound)
	gone(t, "after the refused writes", a, "login", "login-1")

	fresh := put(t, b, Record("login", "login-1", []byte("again"), 2*time.Hour))
	if fresh.Version == r.Version {
		t.Fatalf("the record created over an expired one took its version %d", r.Version)
	}
	same(t, "created over the expired record", a, fresh)
	_, err = a.Put(ctxT(t), upd)
	wantErr(t, "Put over the expired record's version, after the create", err, grant.ErrConflict)
	err = a.Delete(ctxT(t), "login", "login-1", r.Version)
	wantErr(t, "Delete of the expired record's version, after the create", err, grant.ErrConflict)
	same(t, "after writes over the old version", b, fresh)
}

// testRecreate: after a Delete, a create gives a version the deleted
// record never had, so a writer still holding the old one conflicts.
func testRecreate(t *testing.T, _ *testclock.Clock, a, b grant.Store) {
	seen := map[int64]bool{}
	var last grant.Record
	for i := range 8 {
		r := put(t, a, Record("code", "code-x", fmt.Appendf(nil, "round %d", i), time.Hour))
		if seen[r.Version] {
			t.Fatalf("round %d: version %d reused", i, r.Version)
		}
		seen[r.Version] = true
		if i > 0 {
			stale := last
			stale.Data = []byte("stale")
			_, err := b.Put(ctxT(t), stale)
			wantErr(t, "Put over a deleted record's version", err, grant.ErrConflict)
			err = b.Delete(ctxT(t), "code", "code-x", last.Version)
			wantErr(t, "Delete of a deleted record's version", err, grant.ErrConflict)
		}
		if err := b.Delete(ctxT(t), "code", "code-x", r.Version); err != nil {
			t.Fatalf("round %d: Delete: %v", i, err)
		}
		last = r
	}
}
