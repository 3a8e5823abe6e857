package pagetoken

import (
	"encoding/json"
	"errors"
	"testing"
	"time"
)

// FuzzToken checks the review page's token, which every answer posts back:
// sealed claims open as they were sealed (ErrExpired with them at or
// after their expiry, ErrInvalid never); a token too long to open is
// refused; a token with one character changed opens to the same claims
// or not at all (ErrInvalid); and any other text is ErrInvalid.
func FuzzToken(f *testing.F) {
	f.Add("el", "r1", "", int64(3600), int64(7200), 10, byte('A'), "v1.k1.e30.AAAA")
	f.Add("el-2", "r2", "rv", int64(0), int64(0), 70, byte('.'), "")
	f.Add("\x00\"", "\xff", "\u2028", int64(-1), int64(-1<<40), -1, byte('_'), "v1.k0..")
	k, err := ParseKeyring("k1:" + s1 + ", k0:" + s0)
	if err != nil {
		f.Fatal(err)
	}
	other, err := ParseKeyring("k1:" + s0)
	if err != nil {
		f.Fatal(err)
	}
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	f.Fuzz(func(t *testing.T, eid, rid, reviewer string, exp, reqExp int64, flip int, with byte, junk string) {
		c := Claims{ElicitationID: asJSON(eid), RenderID: asJSON(rid), Reviewer: asJSON(reviewer),
			Expires: now.Add(time.Duration(exp%(1<<40)) * time.Millisecond), RequestExpires: now.Add(time.Duration(reqExp%(1<<40)) * time.Millisecond)}
		tok, err := k.Seal(c)
		if c.ElicitationID == "" || c.RenderID == "" {
			if err == nil {
				t.Fatalf("sealed claims without an id: %+v", c)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		got, err := k.Open(tok, now)
		switch {
		case len(tok) > maxTokenBytes:
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("a token of %d bytes: %v, want ErrInvalid", len(tok), err)
			}
			return
		case !now.Before(c.Expires) && !errors.Is(err, ErrExpired), now.Before(c.Expires) && err != nil:
			t.Fatalf("Open at %v of a token expiring %v: %v", now, c.Expires, err)
		case !got.Expires.Equal(c.Expires) || !got.RequestExpires.Equal(c.RequestExpires) || got.ElicitationID != c.ElicitationID || got.RenderID != c.RenderID || got.Reviewer != c.Reviewer:
			t.Fatalf("opened %+v, sealed %+v", got, c)
		}
		if _, err := other.Open(tok, now); !errors.Is(err, ErrInvalid) {
			t.Fatalf("another keyring's key k1 opened the token: %v", err)
		}
		if flip >= 0 && flip < len(tok) && tok[flip] != with {
			altered := tok[:flip] + string(with) + tok[flip+1:]
			if g, err := k.Open(altered, now); err == nil || errors.Is(err, ErrExpired) {
				if g != got {
					t.Fatalf("altered token %q opened to %+v", altered, g)
				}
			} else if !errors.Is(err, ErrInvalid) {
				t.Fatalf("altered token: %v, want ErrInvalid", err)
			}
		}
		if junk != tok {
			if g, err := k.Open(junk, now); !errors.Is(err, ErrInvalid) {
				t.Fatalf("text %q opened to %+v, %v", junk, g, err)
			}
		}
	})
}

// asJSON is s as a JSON string carries it.
func asJSON(s string) string {
	b, _ := json.Marshal(s)
	_ = json.Unmarshal(b, &s)
	return s
}
