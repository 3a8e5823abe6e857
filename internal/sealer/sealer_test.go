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
