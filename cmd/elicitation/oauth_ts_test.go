package main

import (
	"context"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcp-elicitation/elicitation/internal/clientreg"
	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/reviewauth"
	"github.com/mcp-elicitation/elicitation/internal/reviewauth/oidctest"
	"github.com/mcp-elicitation/elicitation/internal/testenv"
)

// TestTypeScriptOAuthHost: a native host on the TypeScript SDK 2.4
// (@modelcontextprotocol/client) connects to the local server with the
// SDK's own OAuth client (testdata/tsoauth.mjs), once registering itself
// (RFC 7591) and once naming a client ID metadata document served over
// https; headless Chromium signs alice in at the OpenID provider and
// allows on the consent page. The host then calls tools as alice (the
// server records her as the requester), refreshes through the SDK's
// auth() (the token rotates, nobody is asked again), gets through a 401
// for a refused access token (the SDK refreshes and retries by itself),
// and once the test revokes the token its next call is refused: the SDK's
// refresh fails and it surfaces UnauthorizedError, asking for a new
// authorization.
func TestTypeScriptOAuthHost(t *testing.T) {
	testenv.Slow(t, "TypeScript SDK OAuth client in Chromium")
	t.Parallel()
	node := testenv.Node(t)
	for _, pkg := range []string{"playwright-core", "@modelcontextprotocol/client"} {
		testenv.NodeModule(t, filepath.Join(pkg, "package.json"))
	}
	chromium := os.Getenv("CHROMIUM_PATH")
	if chromium == "" {
		chromium = "/usr/bin/chromium"
	}
	if _, err := os.Stat(chromium); err != nil {
		t.Fatalf("this test needs Chromium at %s (or CHROMIUM_PATH): apt-get install -y chromium", chromium)
	}

	// The client ID metadata document, on https at loopback: its redirect
	// URI names no port, as a native host cannot know its port in advance
	// (RFC 8252 section 7.3).
	var fetched atomic.Int32
	var docURL string
	docs := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/hosts/ts.json" {
			http.NotFound(w, r)
			return
		}
		fetched.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"client_id": docURL, "client_name": "TS Document Host", "client_uri": "https://example.com/",
			"redirect_uris": []string{"http://127.0.0.1/callback"}, "grant_types": []string{"authorization_code", "refresh_token"},
			"response_types": []string{"code"}, "token_endpoint_auth_method": "none",
		})
	}))
	t.Cleanup(docs.Close)
	docURL = docs.URL + "/hosts/ts.json"
	roots := x509.NewCertPool()
	roots.AddCert(docs.Certificate())

	addr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
	p := oidctest.Start(t, "http://"+addr+reviewauth.CallbackPath)
	m := startWith(t, []Option{withClientDocuments(clientreg.DocumentOptions{AllowInsecureLoopback: true, RootCAs: roots})},
		"--addr", addr, "--data-dir", t.TempDir(), "--oauth",
		"--oidc-issuer", p.Issuer, "--oidc-client-id", oidctest.ClientID, "--oidc-client-secret", oidctest.ClientSecret)
	base := "http://" + addr
	script := filepath.Join(testenv.Root(t), "cmd", "elicitation", "testdata", "tsoauth.mjs")

	for _, tc := range []struct {
		name, document, clientName, forgotten string
	}{
		{name: "registration", clientName: "TS Registered Host"},
		{name: "metadata-document", document: docURL, clientName: "TS Document Host"},
		// A host holding a registration and tokens the server does not
		// know: its refresh is answered invalid_client, so it registers
		// again (a server_error would leave it sending the person to an
		// authorization that fails).
		{name: "registration-forgotten", clientName: "TS Registered Host", forgotten: "forgotten-client"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plan, _ := json.Marshal(map[string]string{
				"mcp": m.MCPURL, "chromium": chromium, "user": "alice", "password": oidctest.Password,
				"clientName": tc.clientName, "clientMetadataUrl": tc.document, "forgotten": tc.forgotten, "issuer": base,
			})
			h := startTSHost(t, node, script, string(plan))

			reg := h.waitFor("registered")
			var info struct {
				RedirectURL       string
				ClientInformation struct {
					ClientID string `json:"client_id"`
				}
				Discovery   struct{ Issuer, Resource string }
				Invalidated []string
			}
			remarshal(t, reg, &info)
			clientID := info.ClientInformation.ClientID
			if tc.forgotten != "" && (clientID == tc.forgotten || !slices.Equal(info.Invalidated, []string{"client", "tokens"})) {
				t.Fatalf("a forgotten registration: now client_id %q, the SDK invalidated %v; want a new registration after invalidating client and tokens", clientID, info.Invalidated)
			}
			if info.Discovery.Issuer != base || info.Discovery.Resource != m.MCPURL {
				t.Errorf("discovered issuer %q and resource %q, want %s and %s", info.Discovery.Issuer, info.Discovery.Resource, base, m.MCPURL)
			}
			if tc.document != "" && clientID != docURL {
				t.Fatalf("client_id %q, want the document's URL %s", clientID, docURL)
			}
			if tc.document == "" && (clientID == "" || strings.HasPrefix(clientID, "https://")) {
				t.Fatalf("registered client_id %q", clientID)
			}

			consent := h.waitFor("consent")
			var page struct {
				Login, URL, Heading, Person, Receipt string
				Fits                                 bool
				AllowHeight, DenyHeight              float64
			}
			remarshal(t, consent, &page)
			if !page.Fits || page.AllowHeight < 44 || page.DenyHeight < 44 {
				t.Errorf("the consent page on a 390-pixel phone: fits %v, Allow %.0f px and Deny %.0f px high (want no horizontal scroll and 44 px or more)", page.Fits, page.AllowHeight, page.DenyHeight)
			}
			if !strings.HasPrefix(page.Login, strings.TrimSuffix(p.Issuer, "/")) || !strings.HasPrefix(page.URL, base+"/review/oauth/consent?") {
				t.Errorf("the browser signed in at %s and consented at %s", page.Login, page.URL)
			}
			redirect, err := url.Parse(info.RedirectURL)
			if err != nil || redirect.Port() == "" {
				t.Fatalf("the host's redirect URI %q", info.RedirectURL)
			}
			if page.Heading != "Connect "+tc.clientName+"?" || page.Person != "Signed in as alice@example.com" || !strings.Contains(page.Receipt, "Returns you to\n"+redirect.Host) {
				t.Errorf("consent page: %+v", page)
			}
			if tc.document != "" && (!strings.Contains(page.Receipt, docURL) || fetched.Load() == 0) {
				t.Errorf("the consent page does not name the document %s, fetched %d times: %q", docURL, fetched.Load(), page.Receipt)
			}

			var cb struct{ Params map[string]string }
			remarshal(t, h.waitFor("callback"), &cb)
			if cb.Params["iss"] != base || cb.Params["code"] == "" || cb.Params["state"] != "st-0" {
				t.Errorf("the authorization response %v, want a code, state st-0 and iss %s (RFC 9207)", cb.Params, base)
			}

			var first struct {
				Tokens   oauthTokens
				ClientID string
			}
			remarshal(t, h.waitFor("tokens"), &first)
			checkAccessToken(t, first.Tokens.AccessToken, clientID, m.MCPURL)
			if first.ClientID != clientID || first.Tokens.RefreshToken == "" || !strings.Contains(" "+first.Tokens.Scope+" ", " elicitation ") {
				t.Errorf("tokens %+v for %q", first.Tokens, first.ClientID)
			}

			var called struct {
				Created struct{ ElicitationID string }
				Status  struct{ Audit elicitation.AuditTrail }
			}
			remarshal(t, h.waitFor("called"), &called)
			if a := called.Status.Audit.Entries; len(a) == 0 || a[0].Principal != "alice@example.com" {
				t.Errorf("elicit_status audit: %+v", a)
			}
			// What the server recorded: the request is alice's.
			trail, err := m.Service.Audit(context.Background(), "alice@example.com", called.Created.ElicitationID)
			if err != nil || len(trail.Entries) == 0 || trail.Entries[0].Action != elicitation.ActionCreated || trail.Entries[0].Principal != "alice@example.com" {
				t.Fatalf("the server's audit of %s for alice: %+v %v", called.Created.ElicitationID, trail, err)
			}

			var refreshed struct {
				Result         string
				Tokens         oauthTokens
				Authorizations int
			}
			remarshal(t, h.waitFor("refreshed"), &refreshed)
			if refreshed.Result != "AUTHORIZED" || refreshed.Authorizations != 1 ||
				refreshed.Tokens.AccessToken == first.Tokens.AccessToken || refreshed.Tokens.RefreshToken == first.Tokens.RefreshToken {
				t.Fatalf("refresh: %s after %d authorizations; access token rotated %v, refresh token rotated %v", refreshed.Result, refreshed.Authorizations,
					refreshed.Tokens.AccessToken != first.Tokens.AccessToken, refreshed.Tokens.RefreshToken != first.Tokens.RefreshToken)
			}
			checkAccessToken(t, refreshed.Tokens.AccessToken, clientID, m.MCPURL)

			// Refused access token: the SDK refreshes by itself and retries.
			var recovered struct {
				Tokens         oauthTokens
				Status         struct{ Status string }
				Authorizations int
			}
			remarshal(t, h.waitFor("recovered"), &recovered)
			if recovered.Status.Status != "pending" || recovered.Authorizations != 1 || recovered.Tokens.RefreshToken == refreshed.Tokens.RefreshToken {
				t.Fatalf("the call after a refused access token: %+v (refresh token rotated %v)", recovered.Status, recovered.Tokens.RefreshToken != refreshed.Tokens.RefreshToken)
			}
			checkAccessToken(t, recovered.Tokens.AccessToken, clientID, m.MCPURL)

			resp := postForm(t, base+"/oauth/revoke", url.Values{"token": {recovered.Tokens.RefreshToken}, "client_id": {clientID}, "token_type_hint": {"refresh_token"}})
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("revoke: %d", resp.StatusCode)
			}
			for _, at := range []string{first.Tokens.AccessToken, refreshed.Tokens.AccessToken, recovered.Tokens.AccessToken} {
				if resp := post(t, m.MCPURL, at, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`); resp.StatusCode != http.StatusUnauthorized || !strings.Contains(resp.Header.Get("WWW-Authenticate"), `error="invalid_token"`) {
					t.Errorf("a revoked token: %d %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
				}
			}
			_, _ = io.WriteString(h.stdin, "revoked\n")
			var refused struct {
				Error, Name    string
				Unauthorized   bool
				Invalidated    []string
				Authorizations int
				TokensLeft     bool
			}
			remarshal(t, h.waitFor("refused"), &refused)
			if !refused.Unauthorized || !slices.Contains(refused.Invalidated, "tokens") || refused.Authorizations != 2 || refused.TokensLeft {
				t.Errorf("after revocation: %+v; want UnauthorizedError, the tokens dropped after the refused refresh, and a second authorization asked for", refused)
			}
			_, _ = io.WriteString(h.stdin, "done\n")
			if err := h.cmd.Wait(); err != nil {
				t.Fatalf("the TypeScript host: %v", err)
			}
		})
	}
}

// oauthTokens are the tokens the host saved.
type oauthTokens struct {
	AccessToken  string `json:"access_token"`
	RefreshToken string `json:"refresh_token"`
	Scope        string `json:"scope"`
}

// checkAccessToken reads (without verifying: the server does that) what
// an access token says: alice, the client, the MCP endpoint as audience.
func checkAccessToken(t *testing.T, token, clientID, resource string) {
	t.Helper()
	parts := strings.Split(token, ".")
	var claims struct {
		Sub      string          `json:"sub"`
		ClientID string          `json:"client_id"`
		Aud      json.RawMessage `json:"aud"`
	}
	if len(parts) != 3 {
		t.Fatalf("the access token is not a JWT")
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err == nil {
		err = json.Unmarshal(b, &claims)
	}
	if err != nil || claims.Sub != "alice@example.com" || claims.ClientID != clientID || !strings.Contains(string(claims.Aud), `"`+resource+`"`) {
		t.Errorf("access token claims %s (%v): want sub alice@example.com, client_id %s, aud %s", b, err, clientID, resource)
	}
}

// remarshal decodes an event into v.
func remarshal(t *testing.T, ev map[string]any, v any) {
	t.Helper()
	b, _ := json.Marshal(ev)
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("event %s: %v", b, err)
	}
}

// withClientDocuments lets client ID metadata documents be fetched as
// opts says (an Option of Start, for tests: loopback, a test CA).
func withClientDocuments(opts clientreg.DocumentOptions) Option {
	return func(o *options) { o.documents = opts }
}

// startWith is start with Options.
func startWith(t *testing.T, opts []Option, args ...string) *Main {
	t.Helper()
	cfg, err := parseServe(append([]string{"--addr", "127.0.0.1:0", "--log-level", "warn"}, args...), io.Discard, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	m, err := Start(context.Background(), cfg, io.Discard, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := m.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return m
}
