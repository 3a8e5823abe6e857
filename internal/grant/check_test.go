package grant_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/grant"
)

// TestCheck: each rule, at its bounds, with the field it names.
func TestCheck(t *testing.T) {
	t.Parallel()
	ok := grant.Record{Kind: "code", ID: "c-1", Data: []byte("x"), Expires: time.Unix(1e9, 0)}
	for _, c := range []struct {
		name  string
		edit  func(*grant.Record)
		field string // "" for valid
	}{
		{"valid", func(*grant.Record) {}, ""},
		{"every kind byte", func(r *grant.Record) { r.Kind = "abcdefghijklmnopqrstuvwxyz-0189" }, ""},
		{"longest kind", func(r *grant.Record) { r.Kind = strings.Repeat("a", grant.MaxKind) }, ""},
		{"longest id", func(r *grant.Record) { r.ID = strings.Repeat("~", grant.MaxID) }, ""},
		{"every id byte", func(r *grant.Record) {
			var b []byte
			for c := byte('!'); c <= '~'; c++ {
				b = append(b, c)
			}
			r.ID = string(b)
		}, ""},
		{"most data", func(r *grant.Record) { r.Data = make([]byte, grant.MaxData) }, ""},
		{"no data", func(r *grant.Record) { r.Data = nil }, ""},
		{"expires at 1970", func(r *grant.Record) { r.Expires = time.Unix(0, 0) }, ""},
		{"a version", func(r *grant.Record) { r.Version = 7 }, ""},
		{"empty kind", func(r *grant.Record) { r.Kind = "" }, "kind is 0 bytes"},
		{"kind too long", func(r *grant.Record) { r.Kind = strings.Repeat("a", grant.MaxKind+1) }, "kind is 33 bytes"},
		{"kind with _", func(r *grant.Record) { r.Kind = "auth_code" }, `kind "auth_code": byte 4`},
		{"empty id", func(r *grant.Record) { r.ID = "" }, "code: id is 0 bytes"},
		{"id too long", func(r *grant.Record) { r.ID = strings.Repeat("a", grant.MaxID+1) }, "code: id is 513 bytes"},
		{"id with a tab", func(r *grant.Record) { r.ID = "a\tb" }, "code: id: byte 1"},
		{"id with UTF-8", func(r *grant.Record) { r.ID = "añb" }, "code: id: byte 1"},
		{"data too big", func(r *grant.Record) { r.Data = make([]byte, grant.MaxData+1) }, "code: data is 65537 bytes"},
		{"no expiry", func(r *grant.Record) { r.Expires = time.Time{} }, "code: expires is missing"},
		{"expiry before 1970", func(r *grant.Record) { r.Expires = time.Unix(0, -1) }, "code: expires 1969-12-31T23:59:59Z is outside"},
		{"negative version", func(r *grant.Record) { r.Version = -3 }, "code: version -3 is negative"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := ok
			c.edit(&r)
			err := grant.Check(r)
			switch {
			case c.field == "" && err != nil:
				t.Fatalf("Check = %v, want nil", err)
			case c.field == "":
			case !errors.Is(err, grant.ErrInvalid) || !strings.Contains(err.Error(), c.field):
				t.Fatalf("Check = %v, want ErrInvalid naming %q", err, c.field)
			}
		})
	}
}

// TestCheckKey: an id no record can have is not found (and invalid); an
// invalid kind is invalid only.
func TestCheckKey(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		kind, id          string
		invalid, notFound bool
	}{
		{"code", "c-1", false, false},
		{"code", "", true, true},
		{"code", "a b", true, true},
		{"Code", "c-1", true, false},
		{"", "c-1", true, false},
	} {
		err := grant.CheckKey(c.kind, c.id)
		if errors.Is(err, grant.ErrInvalid) != c.invalid || errors.Is(err, grant.ErrNotFound) != c.notFound {
			t.Errorf("CheckKey(%q, %q) = %v, want invalid %v, not found %v", c.kind, c.id, err, c.invalid, c.notFound)
		}
	}
}

// TestNewVersion: versions are positive and do not repeat.
func TestNewVersion(t *testing.T) {
	t.Parallel()
	seen := map[int64]bool{}
	for range 10_000 {
		v := grant.NewVersion()
		if v <= 0 || seen[v] {
			t.Fatalf("NewVersion = %d (seen: %v)", v, seen[v])
		}
		seen[v] = true
	}
}
