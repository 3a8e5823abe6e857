package authserver_test

import (
	"net/http"
	"net/url"
	"testing"

	"golang.org/x/oauth2"

	"github.com/mcp-elicitation/elicitation/internal/authserver"
)

// TestTokenResponseNotCached: a token response, a token or an error, says
// Cache-Control: no-store (RFC 6749 section 5.1; the conformance suite's
// authorization-code-grant checks it), so that no cache keeps a token.
func TestTokenResponseNotCached(t *testing.T) {
	t.Parallel()
	h := start(t)
	verifier := oauth2.GenerateVerifier()
	code := h.authorize(t, "alice", verifier).Query().Get("code")
	redeem := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "code_verifier": {verifier},
		"client_id": {"cli"}, "redirect_uri": {"http://127.0.0.1:4567/cb"}}
	for _, tc := range []struct {
		name   string
		status int
	}{
		{"a token", http.StatusOK},
		{"an error (the code again)", http.StatusBadRequest},
	} {
		resp := h.do(t, http.MethodPost, h.url+authserver.TokenPath, "", redeem)
		b := body(resp)
		if resp.StatusCode != http.StatusOK {
			t.Logf("%s: %s", tc.name, b) // an error; a token is not logged
		}
		if resp.StatusCode != tc.status || resp.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("%s: HTTP %d, Cache-Control %q, want %d and no-store", tc.name, resp.StatusCode, resp.Header.Get("Cache-Control"), tc.status)
		}
	}
}
