package authserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/mcp-elicitation/elicitation/internal/authserver"
	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/grant/granttest"
	"github.com/mcp-elicitation/elicitation/internal/sealer"
)

// harness is an authorization server on a real listener, with a person
// signed in by a test header (what reviewer sign-in puts in the context).
type harness struct {
	srv    *authserver.Server
	cfg    authserver.Config // what srv was built with
	url    string
	client authserver.Client
}

const personHeader = "X-Test-Person"

func start(t *testing.T) *harness {
	t.Helper()
	store := &granttest.Memory{}
	h := &harness{client: authserver.Client{ID: "cli", Name: "Test Client", RedirectURIs: []string{"http://127.0.0.1/cb"}, Native: true, AuthMethod: "none", Refresh: true}}
	ts := httptest.NewUnstartedServer(nil)
	h.url = "http://" + ts.Listener.Addr().String()
	var err error
	h.cfg = authserver.Config{
		Store: store,
		Clients: func(_ context.Context, id string) (authserver.Client, error) {
			if id == h.client.ID {
				return h.client, nil
			}
			return authserver.Client{}, errors.New("unknown client")
		},
		Keys:     []sealer.Key{{ID: "k1", Secret: []byte(strings.Repeat("s", 32))}},
		Base:     func(*http.Request) string { return h.url },
		Insecure: true,
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
func (h *harness) authorize(t *testing.T, person, verifier string, extra ...oauth2.AuthCodeOption) *url.URL {
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

func (h *harness) do(t *testing.T, method, u, person string, form url.Values) *http.Response {
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
	// The code is redeemed once.
	if _, err := h.oauth2().Exchange(ctx, q.Get("code"), oauth2.VerifierOption(verifier)); err == nil || !strings.Contains(err.Error(), "invalid_grant") {
		t.Fatalf("second redemption: %v, want invalid_grant", err)
	}
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

func TestMetadata(t *testing.T) {
	t.Parallel()
	h := start(t)
	resp := h.do(t, http.MethodGet, h.url+authserver.MetadataPath, "", nil)
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
	if m, _ := json.Marshal(doc["code_challenge_methods_supported"]); string(m) != `["S256"]` {
		t.Errorf("code_challenge_methods_supported = %s, want [\"S256\"]", m)
	}
	if _, ok := doc["userinfo_endpoint"]; ok {
		t.Error("metadata names a userinfo endpoint this server does not route")
	}
}
