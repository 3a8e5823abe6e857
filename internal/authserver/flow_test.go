package authserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/mcp-elicitation/elicitation/internal/authserver"
	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/grant"
	"github.com/mcp-elicitation/elicitation/internal/grant/granttest"
	"github.com/mcp-elicitation/elicitation/internal/ratelimit"
	"github.com/mcp-elicitation/elicitation/internal/sealer"
	"github.com/mcp-elicitation/elicitation/internal/signing"
)

// harness is an authorization server on a real listener, with a person
// signed in by a test header (what reviewer sign-in puts in the context).
type harness struct {
	srv    *authserver.Server
	cfg    authserver.Config // what srv was built with
	url    string
	client authserver.Client
	// clientsDown makes every client lookup fail (the store behind
	// the registry unreachable), with brokenText.
	clientsDown atomic.Bool
}

const personHeader = "X-Test-Person"

// brokenClient is a client id whose lookup fails (the store is down),
// with brokenText, which must not reach the client.
const (
	brokenClient = "broken"
	brokenText   = "store unreachable at 10.1.2.3"
)

// mixedClient registered https redirect URIs beside loopback ones, as VS
// Code does (its hosted redirect pages and http://127.0.0.1/): a public
// client that is not native by clientreg's definition.
var mixedClient = authserver.Client{ID: "mixed", Name: "Test Client", AuthMethod: "none",
	RedirectURIs: []string{"https://vscode.example/redirect", "http://127.0.0.1/", "http://127.0.0.1:33418/", "com.example.app:/cb"}}

func start(t testing.TB) *harness {
	t.Helper()
	return startWith(t, &granttest.Memory{})
}

// startWith is start over store.
func startWith(t testing.TB, store grant.Store) *harness {
	t.Helper()
	return startEdit(t, store, nil)
}

// startEdit is startWith, its Config changed by edit (when not nil)
// before the server is built.
func startEdit(t testing.TB, store grant.Store, edit func(*authserver.Config)) *harness {
	t.Helper()
	h := &harness{client: authserver.Client{ID: "cli", Name: "Test Client", RedirectURIs: []string{"http://127.0.0.1/cb"}, AuthMethod: "none", Refresh: true}}
	ts := httptest.NewUnstartedServer(nil)
	h.url = "http://" + ts.Listener.Addr().String()
	var err error
	h.cfg = authserver.Config{
		Store: store,
		Clients: func(_ context.Context, id string) (authserver.Client, error) {
			if h.clientsDown.Load() {
				return authserver.Client{}, errors.New(brokenText)
			}
			switch id {
			case h.client.ID:
				return h.client, nil
			case brokenClient:
				return authserver.Client{}, errors.New(brokenText)
			}
			if id == "other" {
				c := h.client
				c.ID = "other"
				return c, nil
			}
			if id == mixedClient.ID {
				return mixedClient, nil
			}
			return authserver.Client{}, fmt.Errorf("test clients: %w", authserver.ErrUnknownClient)
		},
		Keys:           mustKeys(t, sealer.Key{ID: "k1", Secret: []byte(strings.Repeat("s", 32))}),
		Base:           func(*http.Request) string { return h.url },
		Insecure:       true,
		Source:         func(r *http.Request) string { return r.Header.Get("X-Test-Source") },
		Authorizations: ratelimit.New(ratelimit.Rate{Count: 20, Per: time.Hour}, ratelimit.Rate{Count: 1000, Per: time.Hour}, 100),
	}
	if edit != nil {
		edit(&h.cfg)
	}
	h.srv, err = authserver.New(h.cfg)
	if err != nil {
		t.Fatal(err)
	}
	inner := h.srv.Handler(nil)
	ts.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := r.Header.Get(personHeader); p != "" {
			r = r.WithContext(elicitation.WithIdentity(r.Context(), elicitation.Identity{Issuer: "https://idp.example", Subject: "id-" + p, Email: p + "@example.com", EmailVerified: true}))
		}
		inner.ServeHTTP(w, r)
	})
	ts.Start()
	t.Cleanup(ts.Close)
	return h
}

func (h *harness) oauth2() *oauth2.Config {
	return &oauth2.Config{ClientID: h.client.ID, RedirectURL: "http://127.0.0.1:4567/cb", Scopes: []string{"elicitation"},
		Endpoint: oauth2.Endpoint{AuthURL: h.url + authserver.AuthorizePath, TokenURL: h.url + authserver.TokenPath, AuthStyle: oauth2.AuthStyleInParams}}
}

var noFollow = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }, Timeout: 10 * time.Second}

var hidden = regexp.MustCompile(`name="(id|t)" value="([^"]*)"`)

// authorize runs the browser's part for person: the authorization
// request, the consent page, allow; it returns the redirect to the client.
func (h *harness) authorize(t testing.TB, person, verifier string, extra ...oauth2.AuthCodeOption) *url.URL {
	t.Helper()
	opts := append([]oauth2.AuthCodeOption{oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("resource", h.url+"/mcp")}, extra...)
	resp := h.do(t, http.MethodGet, h.oauth2().AuthCodeURL("st-1", opts...), person, nil)
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("authorize: %d %s", resp.StatusCode, body(resp))
	}
	consent := resp.Header.Get("Location")
	resp = h.do(t, http.MethodGet, consent, person, nil)
	page := body(resp)
	if resp.StatusCode != http.StatusOK || !strings.Contains(page, "Test Client") || !strings.Contains(page, "127.0.0.1:4567") {
		t.Fatalf("consent page: %d %s", resp.StatusCode, page)
	}
	form := url.Values{"decision": {"allow"}}
	for _, m := range hidden.FindAllStringSubmatch(page, -1) {
		form.Set(m[1], m[2])
	}
	resp = h.do(t, http.MethodPost, consent, person, form)
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("consent: %d %s", resp.StatusCode, body(resp))
	}
	back, err := url.Parse(resp.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	return back
}

func (h *harness) do(t testing.TB, method, u, person string, form url.Values) *http.Response {
	t.Helper()
	var rd io.Reader
	if form != nil {
		rd = strings.NewReader(form.Encode())
	}
	req, _ := http.NewRequest(method, u, rd)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Sec-Fetch-Site", "same-origin")
	}
	if person != "" {
		req.Header.Set(personHeader, person)
	}
	resp, err := noFollow.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func body(resp *http.Response) string {
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

func (h *harness) verify(t *testing.T, token string) (authserver.Access, error) {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, h.url+"/mcp", nil)
	return h.srv.Verify(context.Background(), token, req)
}

func TestCodeFlowRefreshAndRevocation(t *testing.T) {
	t.Parallel()
	h := start(t)
	ctx := context.Background()
	verifier := oauth2.GenerateVerifier()
	back := h.authorize(t, "alice", verifier)
	q := back.Query()
	if q.Get("state") != "st-1" || q.Get("iss") != h.url || q.Get("code") == "" {
		t.Fatalf("redirect back = %s, want code, state st-1 and iss %s", back, h.url)
	}
	tok, err := h.oauth2().Exchange(ctx, q.Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatal(err)
	}
	if tok.RefreshToken == "" {
		t.Fatal("no refresh token")
	}
	a, err := h.verify(t, tok.AccessToken)
	if err != nil || a.Principal != "alice@example.com" || a.ClientID != "cli" || a.Person.Subject != "id-alice" || a.Person.Issuer != "https://idp.example" {
		t.Fatalf("Verify = %+v, %v; want alice@example.com (subject id-alice at https://idp.example) of cli", a, err)
	}
	// A code redeemed again: TestCodeReplayRevokes.
	// Refresh rotates; the old refresh token used again revokes the family.
	tok2, err := h.oauth2().TokenSource(ctx, &oauth2.Token{RefreshToken: tok.RefreshToken}).Token()
	if err != nil || tok2.RefreshToken == tok.RefreshToken {
		t.Fatalf("refresh: %v (rotated: %v)", err, tok2 != nil && tok2.RefreshToken != tok.RefreshToken)
	}
	if _, err := h.verify(t, tok2.AccessToken); err != nil {
		t.Fatalf("refreshed access token: %v", err)
	}
	if _, err := h.oauth2().TokenSource(ctx, &oauth2.Token{RefreshToken: tok.RefreshToken}).Token(); err == nil {
		t.Fatal("the old refresh token was accepted again")
	}
	for _, at := range []string{tok.AccessToken, tok2.AccessToken} {
		if _, err := h.verify(t, at); !errors.Is(err, authserver.ErrInvalidToken) {
			t.Fatalf("after reuse, an access token of the family: %v, want ErrInvalidToken", err)
		}
	}
	if _, err := h.oauth2().TokenSource(ctx, &oauth2.Token{RefreshToken: tok2.RefreshToken}).Token(); err == nil {
		t.Fatal("the family's newest refresh token still works after a reuse")
	}
}

func TestRevocationEndpoint(t *testing.T) {
	t.Parallel()
	h := start(t)
	ctx := context.Background()
	verifier := oauth2.GenerateVerifier()
	back := h.authorize(t, "bob", verifier)
	tok, err := h.oauth2().Exchange(ctx, back.Query().Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatal(err)
	}
	resp := h.do(t, http.MethodPost, h.url+authserver.RevokePath, "", url.Values{"token": {tok.AccessToken}, "client_id": {"cli"}, "token_type_hint": {"access_token"}})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("revoke: %d %s", resp.StatusCode, body(resp))
	}
	if _, err := h.verify(t, tok.AccessToken); !errors.Is(err, authserver.ErrInvalidToken) {
		t.Fatalf("revoked access token: %v", err)
	}
	if _, err := h.oauth2().TokenSource(ctx, &oauth2.Token{RefreshToken: tok.RefreshToken}).Token(); err == nil {
		t.Fatal("the refresh token of a revoked family still works")
	}
}

// Another process on the same store (the MCP function beside the OAuth
// function) sees a revocation within its RevocationCacheTTL; with a
// negative one, at once.
func TestRevocationSeenByAnotherProcess(t *testing.T) {
	t.Parallel()
	h := start(t)
	ctx := context.Background()
	verifier := oauth2.GenerateVerifier()
	back := h.authorize(t, "bob", verifier)
	tok, err := h.oauth2().Exchange(ctx, back.Query().Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatal(err)
	}
	other := func(ttl time.Duration) *authserver.Server {
		cfg := h.cfg
		cfg.RevocationCacheTTL = ttl
		s, err := authserver.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	cached, uncached := other(0), other(-1)
	req := httptest.NewRequest(http.MethodPost, h.url+"/mcp", nil)
	for _, s := range []*authserver.Server{cached, uncached} {
		if a, err := s.Verify(ctx, tok.AccessToken, req); err != nil || a.Principal != "bob@example.com" {
			t.Fatalf("before the revocation: %+v %v", a, err)
		}
	}
	resp := h.do(t, http.MethodPost, h.url+authserver.RevokePath, "", url.Values{"token": {tok.AccessToken}, "client_id": {"cli"}, "token_type_hint": {"access_token"}})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("revoke: %d %s", resp.StatusCode, body(resp))
	}
	if _, err := uncached.Verify(ctx, tok.AccessToken, req); !errors.Is(err, authserver.ErrInvalidToken) {
		t.Errorf("without a cache, the revoked token: %v, want ErrInvalidToken", err)
	}
	if _, err := cached.Verify(ctx, tok.AccessToken, req); err != nil {
		t.Errorf("within the default 30 s cache, the family found live is trusted: %v", err)
	}
}

func TestRefusals(t *testing.T) {
	t.Parallel()
	h := start(t)
	ctx := context.Background()
	t.Run("no PKCE", func(t *testing.T) {
		resp := h.do(t, http.MethodGet, h.oauth2().AuthCodeURL("s"), "alice", nil)
		loc, _ := url.Parse(resp.Header.Get("Location"))
		if resp.StatusCode != http.StatusFound || loc.Query().Get("error") != "invalid_request" || !strings.HasPrefix(loc.String(), "http://127.0.0.1:4567/cb") {
			t.Fatalf("no PKCE: %d %s", resp.StatusCode, loc)
		}
	})
	t.Run("PKCE mismatch", func(t *testing.T) {
		back := h.authorize(t, "alice", oauth2.GenerateVerifier())
		if _, err := h.oauth2().Exchange(ctx, back.Query().Get("code"), oauth2.VerifierOption(oauth2.GenerateVerifier())); err == nil || !strings.Contains(err.Error(), "invalid_grant") {
			t.Fatalf("exchange with another verifier: %v, want invalid_grant", err)
		}
	})
	t.Run("redirect URI not registered", func(t *testing.T) {
		c := h.oauth2()
		c.RedirectURL = "https://evil.example/cb"
		resp := h.do(t, http.MethodGet, c.AuthCodeURL("s", oauth2.S256ChallengeOption(oauth2.GenerateVerifier())), "alice", nil)
		if loc := resp.Header.Get("Location"); strings.Contains(loc, "evil.example") {
			t.Fatalf("redirected to an unregistered URI: %s", loc)
		}
	})
	t.Run("a code of another client", func(t *testing.T) {
		verifier := oauth2.GenerateVerifier()
		back := h.authorize(t, "alice", verifier)
		other := h.oauth2()
		other.ClientID = "other"
		if _, err := other.Exchange(ctx, back.Query().Get("code"), oauth2.VerifierOption(verifier)); err == nil || !strings.Contains(err.Error(), "invalid_grant") {
			t.Fatalf("another client redeeming the code: %v, want invalid_grant", err)
		}
	})
	t.Run("a client assertion", func(t *testing.T) {
		// private_key_jwt is not supported: the client is told so, as
		// invalid_client, whatever the grant.
		for _, grant := range []url.Values{
			{"grant_type": {"refresh_token"}, "refresh_token": {"fam.secret"}},
			{"grant_type": {"authorization_code"}, "code": {"x"}, "code_verifier": {"v"}, "redirect_uri": {"http://127.0.0.1:4567/cb"}},
		} {
			grant.Set("client_id", "cli")
			grant.Set("client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
			grant.Set("client_assertion", "eyJhbGciOiJFUzI1NiJ9.e30.sig")
			resp := h.do(t, http.MethodPost, h.url+authserver.TokenPath, "", grant)
			b := body(resp)
			if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(b, `"invalid_client"`) {
				t.Fatalf("%s with a client assertion: %d %s, want 401 invalid_client", grant.Get("grant_type"), resp.StatusCode, b)
			}
		}
	})
	t.Run("another resource", func(t *testing.T) {
		resp := h.do(t, http.MethodGet, h.oauth2().AuthCodeURL("s", oauth2.S256ChallengeOption("x"), oauth2.SetAuthURLParam("resource", "https://other.example/mcp")), "alice", nil)
		if b := body(resp); resp.StatusCode != http.StatusBadRequest || !strings.Contains(b, "invalid_target") {
			t.Fatalf("another resource: %d %s", resp.StatusCode, b)
		}
	})
	t.Run("consent from another site", func(t *testing.T) {
		resp := h.do(t, http.MethodGet, h.oauth2().AuthCodeURL("s", oauth2.S256ChallengeOption("x")), "alice", nil)
		consent := resp.Header.Get("Location")
		page := body(h.do(t, http.MethodGet, consent, "alice", nil))
		form := url.Values{"decision": {"allow"}}
		for _, m := range hidden.FindAllStringSubmatch(page, -1) {
			form.Set(m[1], m[2])
		}
		req, _ := http.NewRequest(http.MethodPost, consent, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Sec-Fetch-Site", "cross-site")
		req.Header.Set(personHeader, "alice")
		r, err := noFollow.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if r.StatusCode != http.StatusForbidden {
			t.Fatalf("cross-site consent: %d", r.StatusCode)
		}
		// Shown to alice, posted by mallory: refused.
		r = h.do(t, http.MethodPost, consent, "mallory", form)
		if r.StatusCode != http.StatusForbidden {
			t.Fatalf("consent posted by another person: %d", r.StatusCode)
		}
	})
	t.Run("token of another deployment", func(t *testing.T) {
		verifier := oauth2.GenerateVerifier()
		back := h.authorize(t, "alice", verifier)
		tok, err := h.oauth2().Exchange(ctx, back.Query().Get("code"), oauth2.VerifierOption(verifier))
		if err != nil {
			t.Fatal(err)
		}
		other := start(t)
		if _, err := other.verify(t, tok.AccessToken); !errors.Is(err, authserver.ErrInvalidToken) {
			t.Fatalf("another deployment accepted the token: %v", err)
		}
		if _, err := h.verify(t, tok.AccessToken+"x"); !errors.Is(err, authserver.ErrInvalidToken) {
			t.Fatalf("an altered token: %v", err)
		}
	})
}

// A client the server does not know (its registration expired, or the
// server's data was reset) is told invalid_client at the token and
// revocation endpoints, which makes a client register again; a lookup
// that fails is a server_error that says nothing of why, so that the
// client keeps its registration.
func TestUnknownClient(t *testing.T) {
	t.Parallel()
	h := start(t)
	for _, tc := range []struct {
		name, path string
		form       url.Values
	}{
		{"refresh", authserver.TokenPath, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"fam.secret"}}},
		{"revoke", authserver.RevokePath, url.Values{"token": {"fam.secret"}}},
	} {
		for _, c := range []struct {
			id, want string
			status   int
		}{{"forgotten", "invalid_client", http.StatusUnauthorized}, {brokenClient, "server_error", http.StatusInternalServerError}} {
			t.Run(tc.name+"/"+c.id, func(t *testing.T) {
				form := url.Values{"client_id": {c.id}}
				for k, v := range tc.form {
					form[k] = v
				}
				resp := h.do(t, http.MethodPost, h.url+tc.path, "", form)
				b := body(resp)
				var e struct{ Error string }
				_ = json.Unmarshal([]byte(b), &e)
				if resp.StatusCode != c.status || e.Error != c.want || strings.Contains(b, brokenText) {
					t.Fatalf("%d %s, want %d %s (and nothing of the cause)", resp.StatusCode, b, c.status, c.want)
				}
			})
		}
	}
}

// The authorization server's metadata, at RFC 8414's path and at OpenID
// discovery's (which MCP clients try too), is one document: what this
// server serves, and nothing it does not route or support.
func TestMetadata(t *testing.T) {
	t.Parallel()
	h := start(t)
	for _, path := range []string{authserver.MetadataPath, "/.well-known/openid-configuration"} {
		t.Run(path, func(t *testing.T) {
			resp := h.do(t, http.MethodGet, h.url+path, "", nil)
			var doc map[string]any
			if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			want := map[string]any{
				"issuer": h.url, "authorization_endpoint": h.url + authserver.AuthorizePath, "token_endpoint": h.url + authserver.TokenPath,
				"registration_endpoint": h.url + authserver.RegisterPath, "revocation_endpoint": h.url + authserver.RevokePath,
				"client_id_metadata_document_supported": true, "authorization_response_iss_parameter_supported": true,
			}
			for k, v := range want {
				if doc[k] != v {
					t.Errorf("%s = %v, want %v", k, doc[k], v)
				}
			}
			for k, v := range map[string]string{
				"code_challenge_methods_supported": `["S256"]`, "response_types_supported": `["code"]`,
				"response_modes_supported": `["query"]`, "grant_types_supported": `["authorization_code","refresh_token"]`,
			} {
				if m, _ := json.Marshal(doc[k]); string(m) != v {
					t.Errorf("%s = %s, want %s", k, m, v)
				}
			}
			for _, k := range []string{"userinfo_endpoint", "introspection_endpoint", "end_session_endpoint", "device_authorization_endpoint"} {
				if _, ok := doc[k]; ok {
					t.Errorf("metadata names %s, which this server does not route", k)
				}
			}
		})
	}
}

// Tokens only this server could sign, with one claim changed: past their
// expiry, for another resource, naming another person than their subject,
// naming a family that does not exist. Each is refused; the unchanged one
// passes.
func TestResignedTokens(t *testing.T) {
	t.Parallel()
	h := start(t)
	verifier := oauth2.GenerateVerifier()
	back := h.authorize(t, "alice", verifier)
	tok, err := h.oauth2().Exchange(context.Background(), back.Query().Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		edit func(map[string]any)
		ok   bool
	}{
		{"unchanged", func(map[string]any) {}, true},
		{"expired", func(c map[string]any) { c["exp"] = authserver.Epoch(time.Now().Add(-time.Minute)) }, false},
		{"another resource", func(c map[string]any) { c["aud"] = []string{"https://other.example/mcp"} }, false},
		{"another person", func(c map[string]any) { c["sub"] = "mallory@example.com" }, false},
		{"an unknown family", func(c map[string]any) { c["jti"] = "nofamily.x" }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			forged, err := authserver.Resign(h.srv, tok.AccessToken, tc.edit)
			if err != nil {
				t.Fatal(err)
			}
			_, err = h.verify(t, forged)
			if tc.ok != (err == nil) {
				t.Fatalf("Verify: %v, want ok=%v", err, tc.ok)
			}
			if !tc.ok && !errors.Is(err, authserver.ErrInvalidToken) {
				t.Fatalf("Verify: %v, want ErrInvalidToken", err)
			}
		})
	}
}

func mustKeys(t testing.TB, keys ...sealer.Key) []signing.Key {
	t.Helper()
	out, err := signing.Derive(keys)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// A flood of authorization requests from one source is refused (429 with
// Retry-After) before it keeps a sign-in in progress; another source
// still starts one.
func TestAuthorizationFlood(t *testing.T) {
	t.Parallel()
	h := start(t)
	get := func(source string) *http.Response {
		req, _ := http.NewRequest(http.MethodGet, h.oauth2().AuthCodeURL("s", oauth2.S256ChallengeOption(oauth2.GenerateVerifier())), nil)
		req.Header.Set("X-Test-Source", source)
		resp, err := noFollow.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	for i := range 20 {
		if resp := get("flood"); resp.StatusCode != http.StatusFound {
			t.Fatalf("authorization %d of the flooding source: %d", i, resp.StatusCode)
		}
	}
	if resp := get("flood"); resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("the 21st authorization of one source: %d, want 429 with Retry-After", resp.StatusCode)
	}
	if resp := get("other"); resp.StatusCode != http.StatusFound {
		t.Fatalf("another source during the flood: %d", resp.StatusCode)
	}
}

// BenchmarkVerify is /mcp's check of an access token: "first", the ES256
// signature, the claims and the person (the family's liveness cached);
// "again", the same token on a later call, from the cache of verified
// tokens (the family's liveness still checked).
func BenchmarkVerify(b *testing.B) {
	h := start(b)
	verifier := oauth2.GenerateVerifier()
	back := h.authorize(b, "alice", verifier)
	tok, err := h.oauth2().Exchange(context.Background(), back.Query().Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		b.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodPost, h.url+"/mcp", nil)
	ctx := context.Background()
	for _, first := range []bool{true, false} {
		name := map[bool]string{true: "first", false: "again"}[first]
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if first {
					authserver.ForgetTokens(h.srv)
				}
				if _, err := h.srv.Verify(ctx, tok.AccessToken, req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// Every client's redirect URIs follow the one rule (docs/security.md):
// https and private-use schemes exactly, loopback http on any port, for a
// client that registered both kinds too (VS Code registers its hosted
// redirect pages beside http://127.0.0.1/). Anything else is refused
// without a redirect.
func TestRedirectURIRules(t *testing.T) {
	t.Parallel()
	h := start(t)
	for _, tc := range []struct {
		redirect string
		ok       bool
	}{
		{"https://vscode.example/redirect", true},
		{"http://127.0.0.1/", true},
		{"http://127.0.0.1:33418/", true},
		{"http://127.0.0.1:50123/", true},
		{"com.example.app:/cb", true},
		{"https://vscode.example/redirect/", false},
		{"https://vscode.example:8443/redirect", false},
		{"http://127.0.0.1:50123/other", false},
		{"http://vscode.example/redirect", false},
		{"com.example.app:/other", false},
		{"https://evil.example/redirect", false},
	} {
		t.Run(tc.redirect, func(t *testing.T) {
			t.Parallel()
			c := h.oauth2()
			c.ClientID, c.RedirectURL = mixedClient.ID, tc.redirect
			resp := h.do(t, http.MethodGet, c.AuthCodeURL("s", oauth2.S256ChallengeOption(oauth2.GenerateVerifier())), "alice", nil)
			b := body(resp)
			loc := resp.Header.Get("Location")
			consent := resp.StatusCode == http.StatusFound && strings.HasPrefix(loc, h.url+authserver.ConsentPath)
			if consent != tc.ok || (!tc.ok && loc != "") {
				t.Fatalf("authorize with %s: %d %s %s, want consent=%v and no redirect elsewhere", tc.redirect, resp.StatusCode, loc, b, tc.ok)
			}
		})
	}
}
