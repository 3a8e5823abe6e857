package pagetoken

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"
)

func testRing(t *testing.T, config string) *Keyring {
	t.Helper()
	k, err := ParseKeyring(config)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

var (
	s1 = base64.StdEncoding.EncodeToString([]byte(strings.Repeat("a", 32)))
	s0 = base64.RawURLEncoding.EncodeToString([]byte(strings.Repeat("b", 40)))
)

func TestSealOpen(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	k := testRing(t, "k1:"+s1+", k0:"+s0)
	c := Claims{ElicitationID: "el", RenderID: "r1", Expires: now.Add(time.Hour), RequestExpires: now.Add(2 * time.Hour)}
	tok, err := k.Seal(c)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(tok, "v1.k1.") {
		t.Fatalf("token %q not sealed with the current key", tok)
	}
	got, err := k.Open(tok, now)
	if err != nil || got != c {
		t.Fatalf("Open = %+v, %v; want %+v", got, err, c)
	}
	if _, err := k.Open(tok, now.Add(time.Hour)); !errors.Is(err, ErrExpired) {
		t.Fatalf("Open at expiry = %v, want ErrExpired", err)
	}
	// Deterministic: the same claims give the same token.
	if tok2, _ := k.Seal(c); tok2 != tok {
		t.Fatal("Seal is not deterministic")
	}
}

func TestRotation(t *testing.T) {
	now := time.Now()
	old := testRing(t, "k0:"+s0)
	tok, err := old.Seal(Claims{ElicitationID: "e", RenderID: "r", Expires: now.Add(time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	rotated := testRing(t, "k1:"+s1+",k0:"+s0)
	if _, err := rotated.Open(tok, now); err != nil {
		t.Fatalf("a token of the previous key must open after rotation: %v", err)
	}
	dropped := testRing(t, "k1:"+s1)
	if _, err := dropped.Open(tok, now); !errors.Is(err, ErrInvalid) {
		t.Fatalf("a token of a removed key: %v, want ErrInvalid", err)
	}
}

func TestForgeries(t *testing.T) {
	now := time.Now()
	k := testRing(t, "k1:"+s1+",k0:"+s0)
	tok, _ := k.Seal(Claims{ElicitationID: "e", RenderID: "r", Expires: now.Add(time.Minute)})
	parts := strings.Split(tok, ".")
	other := testRing(t, "k1:"+s0)
	foreign, _ := other.Seal(Claims{ElicitationID: "e", RenderID: "r", Expires: now.Add(time.Minute)})
	altered := base64.RawURLEncoding.EncodeToString([]byte(`{"e":"other","r":"r","x":"2999-01-01T00:00:00Z"}`))
	for name, bad := range map[string]string{
		"empty":          "",
		"garbage":        "not a token",
		"v2":             "v2." + strings.Join(parts[1:], "."),
		"unknown kid":    "v1.k9." + parts[2] + "." + parts[3],
		"other kid":      "v1.k0." + parts[2] + "." + parts[3],
		"altered claims": parts[0] + "." + parts[1] + "." + altered + "." + parts[3],
		"bad mac":        parts[0] + "." + parts[1] + "." + parts[2] + ".AAAA",
		"truncated":      tok[:len(tok)-2],
		"other secret":   foreign,
		"too long":       tok + strings.Repeat("A", 2000),
	} {
		if _, err := k.Open(bad, now); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: Open = %v, want ErrInvalid", name, err)
		}
	}
}

func TestParseKeyringErrors(t *testing.T) {
	short := base64.StdEncoding.EncodeToString([]byte("short"))
	for _, cfg := range []string{"", "nokey", "k1:!!!", "k1:" + short, ":" + s1, "k.1:" + s1, "k1:" + s1 + ",k1:" + s0} {
		if _, err := ParseKeyring(cfg); err == nil {
			t.Errorf("ParseKeyring(%q) succeeded", cfg)
		}
	}
}

func TestGenerateSecret(t *testing.T) {
	a, b := GenerateSecret(), GenerateSecret()
	if a == b {
		t.Fatal("secrets repeat")
	}
	if _, err := ParseKeyring("local:" + a); err != nil {
		t.Fatal(err)
	}
	if r1, r2 := NewRenderID(), NewRenderID(); r1 == r2 || len(r1) < 22 {
		t.Fatal("render ids must be random 128-bit values")
	}
}

// A token in the format issued before the one signing primitive
// (HMAC-SHA256 over "v1.<kid>.<payload>", computed here by hand) opens,
// and Seal still makes exactly that: tokens on open pages stay valid.
func TestWireFormat(t *testing.T) {
	secret := []byte(strings.Repeat("a", 32))
	head := "v1.k1." + base64.RawURLEncoding.EncodeToString([]byte(`{"e":"el","r":"r1","x":"2030-01-01T00:00:00Z"}`))
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(head))
	tok := head + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
	k, err := NewKeyring(Key{ID: "k1", Secret: secret})
	if err != nil {
		t.Fatal(err)
	}
	c, err := k.Open(tok, time.Date(2029, 1, 1, 0, 0, 0, 0, time.UTC))
	if err != nil || c.ElicitationID != "el" || c.RenderID != "r1" {
		t.Fatalf("an issued token: %+v, %v", c, err)
	}
	if again, _ := k.Seal(c); again != tok {
		t.Errorf("Seal = %s, want the issued format %s", again, tok)
	}
}
