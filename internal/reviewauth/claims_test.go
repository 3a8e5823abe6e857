package reviewauth

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/pagetoken"
	"github.com/mcp-elicitation/elicitation/internal/review"
	"github.com/mcp-elicitation/elicitation/internal/sealer"
)

func TestReadClaims(t *testing.T) {
	a := &Auth{cfg: Config{GroupsClaim: "groups"}}
	for _, tc := range []struct {
		name   string
		claims map[string]any
		want   elicitation.Identity
	}{
		{"boolean verified, group list", map[string]any{"email": "A@x.org", "email_verified": true, "groups": []any{"ops", 7, "dev"}},
			elicitation.Identity{Email: "A@x.org", EmailVerified: true, Groups: []string{"ops", "dev"}}},
		{"string verified (Cognito), space-separated groups", map[string]any{"email": "a@x.org", "email_verified": "true", "groups": "ops dev"},
			elicitation.Identity{Email: "a@x.org", EmailVerified: true, Groups: []string{"ops", "dev"}}},
		{"unverified", map[string]any{"email": "a@x.org", "email_verified": "false"}, elicitation.Identity{Email: "a@x.org"}},
		{"no e-mail", map[string]any{"groups": []any{}}, elicitation.Identity{}},
	} {
		var id elicitation.Identity
		a.readClaims(&id, tc.claims)
		if id.Email != tc.want.Email || id.EmailVerified != tc.want.EmailVerified || !slices.Equal(id.Groups, tc.want.Groups) {
			t.Errorf("%s: %+v, want %+v", tc.name, id, tc.want)
		}
	}
}

func TestSigner(t *testing.T) {
	k, _ := pagetoken.ParseKeyring("k2:" + pagetoken.GenerateSecret() + ",k1:" + pagetoken.GenerateSecret())
	s := testSigner(t, k.Derive("review session"))
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	v, err := s.seal(cookieClaims{Kind: kindSession, Expires: now.Add(time.Minute), Issuer: "https://i/", Subject: "s"})
	if err != nil {
		t.Fatal(err)
	}
	if c, err := s.open(v, kindSession, now); err != nil || c.Subject != "s" {
		t.Fatalf("open = %+v, %v", c, err)
	}
	if _, err := s.open(v, "l", now); err == nil {
		t.Error("a session opened as another kind")
	}
	if _, err := s.open(v, kindSession, now.Add(time.Minute)); err != errExpired {
		t.Errorf("at expiry: %v", err)
	}
	// Sealed with the old key, opened after rotation; refused under
	// another purpose's keys.
	rotated := testSigner(t, k.Derive("review session")[1:])
	v2, _ := rotated.seal(cookieClaims{Kind: kindSession, Expires: now.Add(time.Minute), Subject: "s"})
	if _, err := s.open(v2, kindSession, now); err != nil {
		t.Errorf("a cookie of the older key: %v", err)
	}
	if _, err := testSigner(t, k.Derive("page")).open(v, kindSession, now); err == nil {
		t.Error("keys of another purpose opened the cookie")
	}
}

// A sign-in's cookie is sealed: its nonce and verifier cannot be read
// from it, it opens only under its own state, and not after LoginTTL.
func TestLoginCookieSealed(t *testing.T) {
	k, _ := pagetoken.ParseKeyring("k1:" + pagetoken.GenerateSecret())
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	a, err := New(Config{Issuer: "https://issuer.example", ClientID: "c", Keys: k.Derive("review session"), Base: func(*http.Request) string { return "https://r.example" }, Now: func() time.Time { return now }, Pages: review.New(review.Options{})})
	if err != nil {
		t.Fatal(err)
	}
	state, other := random(), random()
	c := loginClaims{Expires: now.Add(LoginTTL), Nonce: "nonce-" + random(), Verifier: "verifier-" + random(), Return: "/review/a/b"}
	v, err := a.sealLogin(state, c)
	if err != nil {
		t.Fatal(err)
	}
	for _, part := range strings.Split(v, ".") {
		b, _ := base64.RawURLEncoding.DecodeString(part)
		if strings.Contains(v, c.Nonce) || strings.Contains(string(b), "nonce-") || strings.Contains(string(b), "verifier-") || strings.Contains(string(b), "/review/") {
			t.Fatalf("the sign-in cookie shows its contents: %s", v)
		}
	}
	if got, err := a.openLogin(state, v); err != nil || got != c {
		t.Fatalf("open = %+v, %v", got, err)
	}
	if _, err := a.openLogin(other, v); err == nil {
		t.Error("a sign-in cookie opened under another state")
	}
	if !validState(state) || validState("") || validState(state+"x") || validState(strings.Repeat(";", 32)) {
		t.Error("validState")
	}
	now = now.Add(LoginTTL)
	if _, err := a.openLogin(state, v); err != errExpired {
		t.Errorf("after LoginTTL: %v", err)
	}
}

func testSigner(t *testing.T, keys []pagetoken.Key) signer {
	t.Helper()
	ring, err := sealer.NewKeyring(keys...)
	if err != nil {
		t.Fatal(err)
	}
	return signer{ring: ring}
}

// A session cookie in the format issued before the one signing primitive
// (HMAC-SHA256 over "c1.<kid>.<payload>", computed here by hand) still
// opens: sessions already issued stay valid.
func TestSessionWireFormat(t *testing.T) {
	secret := []byte(strings.Repeat("s", 32))
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	head := "c1.k1." + base64.RawURLEncoding.EncodeToString([]byte(`{"k":"s","x":"2030-01-01T00:01:00Z","iss":"https://i/","sub":"s1","em":"a@example.com","ev":true}`))
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(head))
	v := head + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
	c, err := testSigner(t, []pagetoken.Key{{ID: "k1", Secret: secret}}).open(v, kindSession, now)
	if err != nil || c.Subject != "s1" || c.Email != "a@example.com" || !c.EmailVerified {
		t.Fatalf("an issued session: %+v, %v", c, err)
	}
}
