package sealer_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/mcp-elicitation/elicitation/internal/pagetoken"
	"github.com/mcp-elicitation/elicitation/internal/sealer"
)

func keyring(t *testing.T, text string) *sealer.Keyring {
	t.Helper()
	k, err := sealer.ParseKeyring(text)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestSealOpen(t *testing.T) {
	old, cur := pagetoken.GenerateSecret(), pagetoken.GenerateSecret()
	k0 := keyring(t, "k0:"+old)
	rotated := keyring(t, "k1:"+cur+",k0:"+old)
	sealed := k0.Seal("state", []byte("e1|alice"))
	if strings.Contains(sealed, "alice") {
		t.Fatalf("sealed value shows its plaintext: %s", sealed)
	}
	if got, err := rotated.Open("state", sealed); err != nil || string(got) != "e1|alice" {
		t.Fatalf("open after rotation: %q, %v", got, err)
	}
	if s2 := k0.Seal("state", []byte("e1|alice")); s2 == sealed {
		t.Error("two seals of one value are equal (nonce reused)")
	}
	flip := []byte(sealed)
	flip[len(flip)-3] ^= 1
	for name, tc := range map[string]struct {
		k       *sealer.Keyring
		purpose string
		value   string
	}{
		"another purpose": {rotated, "link", sealed},
		"altered":         {rotated, "state", string(flip)},
		"unknown key":     {keyring(t, "k1:"+cur), "state", sealed},
		"truncated":       {rotated, "state", sealed[:20]},
		"not sealed":      {rotated, "state", "hello"},
		"empty":           {rotated, "state", ""},
	} {
		if _, err := tc.k.Open(tc.purpose, tc.value); !errors.Is(err, sealer.ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
}

func TestParseKeyring(t *testing.T) {
	for _, bad := range []string{"", "k0", "k0:short", "k.0:" + pagetoken.GenerateSecret(), "k0:" + pagetoken.GenerateSecret() + ",k0:" + pagetoken.GenerateSecret()} {
		if _, err := sealer.ParseKeyring(bad); err == nil {
			t.Errorf("ParseKeyring(%q) succeeded", bad)
		}
	}
}

// Sign and Verify: deterministic, rotating, refusing another version, an
// altered payload, an unknown key and anything over the length bound;
// Derive gives other keys that rotate with the keyring.
func TestSignVerifyDerive(t *testing.T) {
	old, cur := pagetoken.GenerateSecret(), pagetoken.GenerateSecret()
	k0 := keyring(t, "k0:"+old)
	rotated := keyring(t, "k1:"+cur+", k0:"+old)
	v := k0.Sign("v9", []byte(`{"a":1}`))
	if !strings.HasPrefix(v, "v9.k0.") || k0.Sign("v9", []byte(`{"a":1}`)) != v {
		t.Fatalf("Sign = %s: want v9.k0.…, deterministic", v)
	}
	if b, err := rotated.Verify("v9", v, 1024); err != nil || string(b) != `{"a":1}` {
		t.Fatalf("Verify after rotation: %q, %v", b, err)
	}
	parts := strings.Split(v, ".")
	for name, bad := range map[string]string{
		"another version": "v8." + strings.Join(parts[1:], "."),
		"altered":         parts[0] + "." + parts[1] + ".eyJhIjoyfQ." + parts[3],
		"unknown key":     strings.Replace(v, ".k0.", ".k7.", 1),
		"too long":        v + strings.Repeat("A", 2000),
		"three parts":     strings.Join(parts[:3], "."),
	} {
		if _, err := rotated.Verify("v9", bad, 1024); !errors.Is(err, sealer.ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
	d := rotated.Derive("session")
	if len(d) != 2 || d[0].ID != "k1" || d[1].ID != "k0" || string(d[0].Secret) == cur {
		t.Fatalf("Derive = %+v", d)
	}
	dk, err := sealer.NewKeyring(d...)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dk.Verify("v9", rotated.Sign("v9", []byte("x")), 1024); err == nil {
		t.Error("derived keys verify the parent's signature")
	}
	if d2 := keyring(t, "k0:"+old).Derive("session"); string(d2[0].Secret) != string(d[1].Secret) {
		t.Error("Derive is not stable across keyrings holding the key")
	}
}

// ParseKeys is the one keyring parser: spaces around parts, any base64
// alphabet, and every malformed keyring refused with a sentence.
func TestParseKeys(t *testing.T) {
	s := pagetoken.GenerateSecret()
	keys, err := sealer.ParseKeys(" k1 : " + s + " , k0:" + strings.TrimRight(strings.NewReplacer("+", "-", "/", "_").Replace(s), "="))
	if err != nil || len(keys) != 2 || keys[0].ID != "k1" || string(keys[0].Secret) != string(keys[1].Secret) {
		t.Fatalf("ParseKeys = %+v, %v", keys, err)
	}
	if bare, err := sealer.ParseKeys(" " + s + " "); err != nil || len(bare) != 1 || bare[0].ID != sealer.InitialKeyID || string(bare[0].Secret) != string(keys[0].Secret) {
		t.Fatalf("a bare secret: %+v, %v; want the key %s", bare, err, sealer.InitialKeyID)
	}
	for _, bad := range []string{"", "k1", "k1:!!!", "k1:c2hvcnQ", ":" + s, "k 1:" + s, "k1:" + s + ",k1:" + s} {
		if _, err := sealer.ParseKeys(bad); err == nil {
			t.Errorf("ParseKeys(%q) succeeded", bad)
		}
	}
}
