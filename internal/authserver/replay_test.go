package authserver_test

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"golang.org/x/oauth2"

	"github.com/mcp-elicitation/elicitation/internal/authserver"
	"github.com/mcp-elicitation/elicitation/internal/grant"
	"github.com/mcp-elicitation/elicitation/internal/grant/granttest"
)

// An authorization code redeemed a second time is refused, and what its
// first redemption issued is revoked (OAuth 2.1 section 4.1.3, RFC 6749
// section 4.1.2): whoever replays a stolen code, the thief or the client
// it was stolen from, the tokens of that code stop working, the access
// token at /mcp and the refresh token (invalid_grant). A replay while
// the first redemption is still issuing its tokens refuses both. A
// replay without the code's verifier (someone who only saw the code, in
// a browser's history or a log, and could never have redeemed it) is
// refused and revokes nothing.
func TestCodeReplayRevokes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		during   bool // replay while the first redemption writes its family
		unproved bool // the replay presents another verifier
	}{
		{"after the first redemption", false, false},
		{"during the first redemption", true, false},
		{"after, without the verifier", false, true},
		{"during, without the verifier", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			store := &hookedStore{Store: &granttest.Memory{}}
			h := startWith(t, store)
			redeem := h.code(t)
			replayed := cloneValues(redeem)
			if tc.unproved {
				replayed.Set("code_verifier", oauth2.GenerateVerifier())
			}
			var replay tokenAnswer
			var replayErr error
			if tc.during {
				var once atomic.Bool
				store.set(func(write string, r grant.Record) error {
					if write == "put" && r.Kind == "family" && r.Version == 0 && once.CompareAndSwap(false, true) {
						replay, replayErr = h.post(cloneValues(replayed))
					}
					return nil
				})
			}
			first := h.token(t, cloneValues(redeem))
			if !tc.during || tc.unproved {
				if first.status != http.StatusOK || first.Token == "" {
					t.Fatalf("first redemption: %d %s", first.status, first.body)
				}
				if _, err := h.verify(t, first.Access); err != nil {
					t.Fatalf("the first access token before the replay: %v", err)
				}
			}
			if !tc.during {
				replay, replayErr = h.post(cloneValues(replayed))
			}
			if replayErr != nil {
				t.Fatal(replayErr)
			}
			if replay.status != http.StatusBadRequest || replay.Error != "invalid_grant" || replay.Access != "" {
				t.Fatalf("replayed code: %d %s, want 400 invalid_grant", replay.status, replay.body)
			}
			if tc.unproved {
				if _, err := h.verify(t, first.Access); err != nil {
					t.Errorf("the first access token after a replay without the verifier: %v", err)
				}
				if a := h.token(t, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {first.Token}}); a.status != http.StatusOK {
					t.Errorf("the first refresh token after a replay without the verifier: %d %s", a.status, a.body)
				}
				return
			}
			if tc.during {
				if first.status != http.StatusBadRequest || first.Error != "invalid_grant" || first.Access != "" {
					t.Fatalf("the redemption a replay overtook: %d %s, want 400 invalid_grant", first.status, first.body)
				}
				return
			}
			if _, err := h.verify(t, first.Access); !errors.Is(err, authserver.ErrInvalidToken) {
				t.Errorf("the first access token after the replay: %v, want ErrInvalidToken", err)
			}
			if a := h.token(t, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {first.Token}}); a.status != http.StatusBadRequest || a.Error != "invalid_grant" {
				t.Errorf("the first refresh token after the replay: %d %s, want 400 invalid_grant", a.status, a.body)
			}
		})
	}
}

func cloneValues(v url.Values) url.Values {
	out := url.Values{}
	for k, vs := range v {
		out[k] = append([]string(nil), vs...)
	}
	return out
}

// The revocation endpoint revokes what a token it issued names, never
// what a string shaped like one names: the family id alone (an access
// token's jti, a refresh token's prefix) with any other secret is not a
// token of the client (RFC 7009 section 2.2: answered 200, nothing
// revoked), so whoever read an id cannot sign the person out.
func TestRevokeNeedsTheToken(t *testing.T) {
	t.Parallel()
	h := start(t)
	first := h.token(t, h.code(t))
	if first.status != http.StatusOK || first.Token == "" {
		t.Fatalf("redemption: %d %s", first.status, first.body)
	}
	fam, _, _ := strings.Cut(first.Token, ".")
	for _, hint := range []string{"", "access_token", "refresh_token"} {
		form := url.Values{"token": {fam + ".not-the-secret"}, "client_id": {"cli"}}
		if hint != "" {
			form.Set("token_type_hint", hint)
		}
		resp := h.do(t, http.MethodPost, h.url+authserver.RevokePath, "", form)
		if b := body(resp); resp.StatusCode != http.StatusOK {
			t.Fatalf("revoke a made-up token (hint %q): %d %s, want 200", hint, resp.StatusCode, b)
		}
	}
	if _, err := h.verify(t, first.Access); err != nil {
		t.Fatalf("the access token after made-up revocations: %v", err)
	}
	next := h.token(t, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {first.Token}})
	if next.status != http.StatusOK {
		t.Fatalf("the refresh token after made-up revocations: %d %s", next.status, next.body)
	}
	// The current refresh token itself revokes the family.
	resp := h.do(t, http.MethodPost, h.url+authserver.RevokePath, "", url.Values{"token": {next.Token}, "client_id": {"cli"}})
	if b := body(resp); resp.StatusCode != http.StatusOK {
		t.Fatalf("revoke the refresh token: %d %s", resp.StatusCode, b)
	}
	if _, err := h.verify(t, next.Access); !errors.Is(err, authserver.ErrInvalidToken) {
		t.Fatalf("the access token after its refresh token's revocation: %v, want ErrInvalidToken", err)
	}
}

// A refresh token used again after its rotation revokes its family
// (TestCodeFlowRefreshAndRevocation); a string that was never one of the
// family's refresh tokens (its id, readable in every access token's jti,
// with a made-up secret) is only invalid_grant, and revokes nothing.
func TestRefreshMadeUpToken(t *testing.T) {
	t.Parallel()
	h := start(t)
	first := h.token(t, h.code(t))
	if first.status != http.StatusOK || first.Token == "" {
		t.Fatalf("redemption: %d %s", first.status, first.body)
	}
	fam, secret, _ := strings.Cut(first.Token, ".")
	for _, madeUp := range []string{fam + ".not-the-secret", fam + "." + secret + "x", fam + ".x." + secret} {
		if a := h.token(t, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {madeUp}}); a.status != http.StatusBadRequest || a.Error != "invalid_grant" {
			t.Fatalf("a made-up refresh token: %d %s, want 400 invalid_grant", a.status, a.body)
		}
	}
	if _, err := h.verify(t, first.Access); err != nil {
		t.Fatalf("the access token after made-up refresh tokens: %v", err)
	}
	if a := h.token(t, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {first.Token}}); a.status != http.StatusOK {
		t.Fatalf("the refresh token after made-up ones: %d %s", a.status, a.body)
	}
}
