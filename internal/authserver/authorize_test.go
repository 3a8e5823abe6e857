package authserver_test

import (
	"cmp"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/oauth2"

	"github.com/mcp-elicitation/elicitation/internal/authserver"
)

// An authorization request this server cannot serve as asked is sent
// back to the client's (verified) redirect URI with the error, in the
// query, with RFC 9207's iss (which the metadata promises in every
// authorization response, errors too, and which a client checking it
// requires), before anyone sees a consent page: PKCE other than S256;
// prompt=none (OpenID Connect
// Core 3.1.2.6: every authorization here needs the person's consent, so
// login_required, or consent_required for a person already signed in); a
// response_mode other than query, the one this server answers in
// (invalid_request, in the query, not where the client asked); a
// code_challenge that cannot be an S256 one (RFC 7636 4.2: the base64url
// SHA-256 of the verifier, 43 characters), which no verifier could match
// at the token endpoint; a state or a nonce too long to keep with the
// sign-in (invalid_request, not the server_error of a failed write). What
// it serves goes on to the consent page (a scope named many times, once).
func TestAuthorizeRefusals(t *testing.T) {
	t.Parallel()
	h := start(t)
	for _, tc := range []struct {
		name   string
		person string
		params map[string]string
		want   string
	}{
		{"PKCE plain", "", map[string]string{"code_challenge_method": "plain"}, "invalid_request"},
		{"prompt none, nobody signed in", "", map[string]string{"prompt": "none"}, "login_required"},
		{"prompt none, signed in", "alice", map[string]string{"prompt": "none"}, "consent_required"},
		{"response_mode fragment", "", map[string]string{"response_mode": "fragment"}, "invalid_request"},
		{"response_mode form_post", "", map[string]string{"response_mode": "form_post"}, "invalid_request"},
		{"response_mode query", "", map[string]string{"response_mode": "query"}, ""},
		{"prompt consent", "", map[string]string{"prompt": "consent"}, ""},
		{"code_challenge too short", "", map[string]string{"code_challenge": "abc"}, "invalid_request"},
		{"code_challenge of 42", "", map[string]string{"code_challenge": strings.Repeat("A", 42)}, "invalid_request"},
		{"code_challenge of 44", "", map[string]string{"code_challenge": strings.Repeat("A", 44)}, "invalid_request"},
		{"code_challenge of 128", "", map[string]string{"code_challenge": strings.Repeat("A", 128)}, "invalid_request"},
		{"code_challenge in base64, not base64url", "", map[string]string{"code_challenge": "+/" + strings.Repeat("A", 41)}, "invalid_request"},
		{"code_challenge padded", "", map[string]string{"code_challenge": strings.Repeat("A", 42) + "="}, "invalid_request"},
		{"code_challenge of 43", "", map[string]string{"code_challenge": strings.Repeat("A", 42) + "_"}, ""},
		{"state of 70,000 bytes", "", map[string]string{"state": strings.Repeat("s", 70000)}, "invalid_request"},
		{"nonce of 70,000 bytes", "", map[string]string{"nonce": strings.Repeat("n", 70000)}, "invalid_request"},
		{"state of 4,096 bytes", "", map[string]string{"state": strings.Repeat("s", 4096)}, ""},
		{"a scope named 10,000 times", "", map[string]string{"scope": strings.Repeat("elicitation ", 10000)}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			opts := []oauth2.AuthCodeOption{oauth2.S256ChallengeOption(oauth2.GenerateVerifier())}
			for k, v := range tc.params {
				opts = append(opts, oauth2.SetAuthURLParam(k, v))
			}
			resp := h.do(t, http.MethodGet, h.oauth2().AuthCodeURL("st-9", opts...), tc.person, nil)
			b := body(resp)
			loc, err := url.Parse(resp.Header.Get("Location"))
			if err != nil {
				t.Fatal(err)
			}
			if tc.want == "" {
				if resp.StatusCode != http.StatusFound || !strings.HasPrefix(loc.String(), h.url+authserver.ConsentPath) {
					t.Fatalf("%d %s %s, want the consent page", resp.StatusCode, loc, b)
				}
				return
			}
			q := loc.Query()
			state := cmp.Or(tc.params["state"], "st-9")
			if resp.StatusCode != http.StatusFound || !strings.HasPrefix(loc.String(), "http://127.0.0.1:4567/cb?") || loc.Fragment != "" ||
				q.Get("error") != tc.want || q.Get("state") != state || q.Get("iss") != h.url || q.Get("code") != "" {
				t.Fatalf("%d %s %s, want a redirect to the client with error=%s, state and iss in the query", resp.StatusCode, loc, b, tc.want)
			}
		})
	}
}

// The consent page's form may send the browser on to where the answer
// goes (its Content-Security-Policy form-action covers the redirect that
// follows the POST, as Chromium enforces it): a client's private-use
// scheme too, which https: and http: do not match.
func TestConsentFormAction(t *testing.T) {
	t.Parallel()
	h := start(t)
	for _, redirect := range []string{"com.example.app:/cb", "https://vscode.example/redirect", "http://127.0.0.1:50123/"} {
		t.Run(redirect, func(t *testing.T) {
			t.Parallel()
			c := h.oauth2()
			c.ClientID, c.RedirectURL = mixedClient.ID, redirect
			resp := h.do(t, http.MethodGet, c.AuthCodeURL("s", oauth2.S256ChallengeOption(oauth2.GenerateVerifier())), "alice", nil)
			consent := resp.Header.Get("Location")
			resp = h.do(t, http.MethodGet, consent, "alice", nil)
			b := body(resp)
			u, _ := url.Parse(redirect)
			want := u.Scheme + ":"
			var formAction string
			for _, d := range strings.Split(resp.Header.Get("Content-Security-Policy"), ";") {
				if f := strings.Fields(d); len(f) > 0 && f[0] == "form-action" {
					formAction = " " + strings.Join(f[1:], " ") + " "
				}
			}
			if resp.StatusCode != http.StatusOK || !strings.Contains(formAction, " 'self' ") || !strings.Contains(formAction, " "+want+" ") {
				t.Fatalf("consent page for %s: %d, form-action %q, want 'self' and %s (%.200s)", redirect, resp.StatusCode, formAction, want, b)
			}
		})
	}
}
