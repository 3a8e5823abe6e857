package granttest

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/grant"
	"github.com/mcp-elicitation/elicitation/internal/testclock"
)

// secretID stands for an id that is a secret (a code): no error quotes it.
const secretID = "Zx9-secret-code-value"

// testInvalid: every record Check refuses is refused by Put with an error
// that names the field, quotes no id, and writes nothing (neither a new
// record nor over a stored one).
func testInvalid(t *testing.T, _ *testclock.Clock, a, b grant.Store) {
	kept := put(t, a, Record("code", secretID, []byte("kept"), time.Hour))
	ok := Record("code", "fresh", []byte("x"), time.Hour)
	with := func(f func(*grant.Record)) grant.Record { r := ok; f(&r); return r }
	over := func(f func(*grant.Record)) grant.Record { r := kept; f(&r); return r }
	for _, c := range []struct {
		name  string
		r     grant.Record
		field string
	}{
		{"empty kind", with(func(r *grant.Record) { r.Kind = "" }), "kind"},
		{"upper-case kind", with(func(r *grant.Record) { r.Kind = "Code" }), "kind"},
		{"kind with #", with(func(r *grant.Record) { r.Kind = "code#1" }), "kind"},
		{"kind with a space", with(func(r *grant.Record) { r.Kind = "co de" }), "kind"},
		{"kind too long", with(func(r *grant.Record) { r.Kind = strings.Repeat("k", grant.MaxKind+1) }), "kind"},
		{"empty id", with(func(r *grant.Record) { r.ID = "" }), "id"},
		{"id with a space", with(func(r *grant.Record) { r.ID = "Zx9 secret-code-value" }), "id"},
		{"id with a control byte", with(func(r *grant.Record) { r.ID = secretID + "\n" }), "id"},
		{"id with a NUL", with(func(r *grant.Record) { r.ID = secretID + "\x00" }), "id"},
		{"id not ASCII", with(func(r *grant.Record) { r.ID = secretID + "é" }), "id"},
		{"id with DEL", with(func(r *grant.Record) { r.ID = secretID + "\x7f" }), "id"},
		{"id too long", with(func(r *grant.Record) { r.ID = strings.Repeat(secretID, grant.MaxID/len(secretID)+1) }), "id"},
		{"data too big", with(func(r *grant.Record) { r.Data = make([]byte, grant.MaxData+1) }), "data"},
		{"no expiry", with(func(r *grant.Record) { r.Expires = time.Time{} }), "expires"},
		{"expiry before 1970", with(func(r *grant.Record) { r.Expires = time.Date(1969, 12, 31, 0, 0, 0, 0, time.UTC) }), "expires"},
		{"expiry after 2262", with(func(r *grant.Record) { r.Expires = time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC) }), "expires"},
		{"negative version", with(func(r *grant.Record) { r.Version = -1 }), "version"},
		{"update too big", over(func(r *grant.Record) { r.Data = make([]byte, grant.MaxData+1) }), "data"},
		{"update without expiry", over(func(r *grant.Record) { r.Expires = time.Time{} }), "expires"},
		{"update with a negative version", over(func(r *grant.Record) { r.Version = -r.Version }), "version"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := grant.Check(c.r); !errors.Is(err, grant.ErrInvalid) {
				t.Fatalf("Check = %v, want ErrInvalid", err)
			}
			_, err := b.Put(ctxT(t), c.r)
			wantErr(t, "Put", err, grant.ErrInvalid)
			if msg := err.Error(); !strings.Contains(msg, c.field) || strings.Contains(msg, secretID) || strings.Contains(msg, "secret") {
				t.Errorf("Put's error %q should name %s and quote no id", msg, c.field)
			}
		})
	}
	same(t, "after refused updates", b, kept)
	gone(t, "after refused creates", a, "code", "fresh")
}

// testInvalidKey: a Get or Delete of an id no record can have is
// ErrNotFound (and ErrInvalid); of an invalid kind, ErrInvalid only.
func testInvalidKey(t *testing.T, _ *testclock.Clock, a, _ grant.Store) {
	for _, c := range []struct {
		name, kind, id string
		notFound       bool
	}{
		{"id too long", "client", "https://x.example/" + strings.Repeat("a", grant.MaxID), true},
		{"empty id", "client", "", true},
		{"id with a space", "code", "a b", true},
		{"empty kind", "", "c-1", false},
		{"kind with #", "code#", "c-1", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, gerr := a.Get(ctxT(t), c.kind, c.id)
			derr := a.Delete(ctxT(t), c.kind, c.id, 1)
			for what, err := range map[string]error{"Get": gerr, "Delete": derr} {
				if !errors.Is(err, grant.ErrInvalid) || errors.Is(err, grant.ErrNotFound) != c.notFound {
					t.Errorf("%s: err = %v, want ErrInvalid, and ErrNotFound %v", what, err, c.notFound)
				}
			}
		})
	}
}

// testKindsIsolate: the same id under two kinds, and kinds and ids that
// run together, are distinct records.
func testKindsIsolate(t *testing.T, _ *testclock.Clock, a, b grant.Store) {
	keys := [][2]string{
		{"code", "x"}, {"client", "x"}, {"code", "x1"}, {"code", "x#"}, {"code", "x~"},
		{"a", "b-c"}, {"a-b", "c"}, {"a", "bc"}, {"ab", "c"}, {"a", "b#c"}, {"a-b", "#c"},
	}
	stored := make([]grant.Record, len(keys))
	for i, k := range keys {
		stored[i] = put(t, a, Record(k[0], k[1], []byte(k[0]+" / "+k[1]), time.Hour))
	}
	for i := range keys {
		same(t, "each key its own record", b, stored[i])
	}
	if err := b.Delete(ctxT(t), "code", "x", stored[0].Version); err != nil {
		t.Fatalf("Delete code x: %v", err)
	}
	gone(t, "deleted", a, "code", "x")
	for i := 1; i < len(keys); i++ {
		same(t, "after deleting another kind's record", a, stored[i])
	}
}

// testDataIsCopied: the store keeps its own copy of the bytes: changing
// the slice given to Put or returned by Get changes nothing stored.
func testDataIsCopied(t *testing.T, _ *testclock.Clock, a, b grant.Store) {
	buf := []byte("original")
	r := put(t, a, Record("client", "cl-1", buf, time.Hour))
	copy(buf, "CHANGED!")
	r.Data = []byte("original")
	same(t, "after changing the slice given to Put", a, r)
	for _, s := range []grant.Store{a, b} {
		got, err := s.Get(ctxT(t), "client", "cl-1")
		if err != nil {
			t.Fatal(err)
		}
		copy(got.Data, "CHANGED!")
	}
	same(t, "after changing the slices Get returned", a, r)
}

// testContextEnded: a call whose context ended fails with its error and
// writes nothing.
func testContextEnded(t *testing.T, _ *testclock.Clock, a, b grant.Store) {
	kept := put(t, a, Record("family", "fam-ctx", []byte("kept"), time.Hour))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := a.Put(ctx, Record("family", "fam-new", []byte("x"), time.Hour))
	wantErr(t, "Put", err, context.Canceled)
	upd := kept
	upd.Data = []byte("changed")
	_, err = a.Put(ctx, upd)
	wantErr(t, "update", err, context.Canceled)
	err = a.Delete(ctx, "family", "fam-ctx", kept.Version)
	wantErr(t, "Delete", err, context.Canceled)
	_, err = a.Get(ctx, "family", "fam-ctx")
	wantErr(t, "Get", err, context.Canceled)
	same(t, "after the ended calls", b, kept)
	gone(t, "after the ended create", b, "family", "fam-new")
	if !bytes.Equal(kept.Data, []byte("kept")) {
		t.Fatal("the record was changed in place")
	}
}
