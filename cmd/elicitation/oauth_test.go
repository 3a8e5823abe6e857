package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/oauth2"

	"github.com/mcp-elicitation/elicitation/internal/reviewauth"
	"github.com/mcp-elicitation/elicitation/internal/reviewauth/oidctest"
	"github.com/mcp-elicitation/elicitation/internal/testenv"
)

// An MCP client connects to the local server with OAuth alone, as a host
// does: the 401 names the resource's metadata, which names the
// authorization server; the client registers (RFC 7591), sends the person
// to sign in at the real OpenID provider and consent, redeems the code
// with PKCE for a token bound to /mcp, and calls tools as the person
// (the principal is alice's verified e-mail). Refreshing rotates the
// token; revoking it shuts the client out; an API key still works beside.
func TestServeWithOAuth(t *testing.T) {
	ctx := context.Background()
	addr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
	p := oidctest.Start(t, "http://"+addr+reviewauth.CallbackPath)
	dir := t.TempDir()
	var out bytes.Buffer
	if err := run(ctx, []string{"keys", "--data-dir", dir, "create", "--principal", "ci-bot", "--json"}, &out, io.Discard, noEnv); err != nil {
		t.Fatal(err)
	}
	var key struct{ Key string }
	_ = json.Unmarshal(out.Bytes(), &key)
	m := start(t, "--addr", addr, "--data-dir", dir, "--oauth",
		"--oidc-issuer", p.Issuer, "--oidc-client-id", oidctest.ClientID, "--oidc-client-secret", oidctest.ClientSecret)
	base := "http://" + addr
	var banner bytes.Buffer
	m.PrintWelcome(&banner)
	if b := banner.String(); !strings.Contains(b, "OAuth on: a host connects with the URL alone. The person signs in with "+p.Issuer) ||
		!strings.Contains(b, "API keys work beside it") || strings.Contains(b, "Authorization") || !strings.Contains(b, "connect --url "+m.MCPURL+" --auth oauth") {
		t.Errorf("the banner with OAuth on:\n%s", b)
	}

	// The challenge and the two metadata documents.
	resp := post(t, m.MCPURL, "", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	challenge := resp.Header.Get("WWW-Authenticate")
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(challenge, `resource_metadata="`+base+`/.well-known/oauth-protected-resource/mcp"`) || !strings.Contains(challenge, `scope="elicitation"`) {
		t.Fatalf("unauthenticated call: %d %q", resp.StatusCode, challenge)
	}
	var prm struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
	}
	getJSON(t, base+"/.well-known/oauth-protected-resource/mcp", &prm)
	if prm.Resource != m.MCPURL || len(prm.AuthorizationServers) != 1 || prm.AuthorizationServers[0] != base {
		t.Fatalf("protected resource metadata = %+v", prm)
	}
	var as struct {
		Issuer, AuthorizationEndpoint, TokenEndpoint, RegistrationEndpoint, RevocationEndpoint string
	}
	getJSONSnake(t, base+"/.well-known/oauth-authorization-server", &as)
	if as.Issuer != base || as.RegistrationEndpoint == "" {
		t.Fatalf("authorization server metadata = %+v", as)
	}
	// The deployment's one key set: the authorization server's, published
	// at the well-known path too.
	var oauthKeys, wellKnown map[string]any
	getJSON(t, base+"/oauth/keys", &oauthKeys)
	getJSON(t, base+"/.well-known/jwks.json", &wellKnown)
	if a, b := fmt.Sprint(oauthKeys["keys"]), fmt.Sprint(wellKnown["keys"]); a != b || !strings.Contains(b, "es256-") {
		t.Errorf("/oauth/keys %s and /.well-known/jwks.json %s differ", a, b)
	}

	// Dynamic registration of a native client.
	redirect := "http://127.0.0.1:7777/callback"
	resp = post(t, as.RegistrationEndpoint, "", `{"redirect_uris":["`+redirect+`"],"client_name":"Test Host","token_endpoint_auth_method":"none","grant_types":["authorization_code","refresh_token"]}`)
	var reg struct {
		ClientID string `json:"client_id"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&reg); err != nil || resp.StatusCode != http.StatusCreated || reg.ClientID == "" {
		t.Fatalf("registration: %d %v %+v", resp.StatusCode, err, reg)
	}
	resp.Body.Close()
	conf := &oauth2.Config{ClientID: reg.ClientID, RedirectURL: redirect, Scopes: []string{"elicitation"},
		Endpoint: oauth2.Endpoint{AuthURL: as.AuthorizationEndpoint, TokenURL: as.TokenEndpoint, AuthStyle: oauth2.AuthStyleInParams}}

	// The person: signs in at the provider, lands on the consent page,
	// allows; the browser is sent back to the client's redirect URI.
	verifier := oauth2.GenerateVerifier()
	browser := oidctest.Browser(t)
	browser.CheckRedirect = func(req *http.Request, _ []*http.Request) error {
		if strings.HasPrefix(req.URL.String(), redirect) {
			return http.ErrUseLastResponse
		}
		return nil
	}
	authURL := conf.AuthCodeURL("st", oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("resource", m.MCPURL))
	resp, page, err := oidctest.SignIn(ctx, browser, authURL, "alice")
	if err != nil || resp.StatusCode != http.StatusOK || !strings.Contains(page, "Test Host") || !strings.Contains(page, "127.0.0.1:7777") || !strings.Contains(page, "alice@example.com") {
		t.Fatalf("consent page: %v %v\n%.1500s", resp, err, page)
	}
	resp, err = allowConsent(ctx, browser, resp.Request.URL.String(), page, base)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	back, _ := url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode != http.StatusSeeOther || back.Query().Get("iss") != base || back.Query().Get("state") != "st" {
		t.Fatalf("consent answer: %d %s", resp.StatusCode, back)
	}
	tok, err := conf.Exchange(ctx, back.Query().Get("code"), oauth2.VerifierOption(verifier), oauth2.SetAuthURLParam("resource", m.MCPURL))
	if err != nil {
		t.Fatal(err)
	}

	if tok.RefreshToken == "" {
		t.Fatal("no refresh token for a client that registered the refresh_token grant")
	}

	// Tools as alice: what she creates is hers.
	s := oauthAgent(t, m.MCPURL, tok.AccessToken)
	c := call(t, s, "elicit_approval", map[string]any{"message": "deploy?", "context": map[string]any{"v": 1}})
	st := call(t, s, "elicit_status", map[string]any{"elicitationId": c["elicitationId"], "includeAudit": true})
	if b, _ := json.Marshal(st["audit"]); !strings.Contains(string(b), `"principal":"alice@example.com"`) {
		t.Errorf("the audit trail does not name alice as the requester: %s", b)
	}
	// An API key still works, and the key's principal does not see alice's request.
	bot := oauthAgent(t, m.MCPURL, key.Key)
	if res, err := bot.CallTool(ctx, &mcp.CallToolParams{Name: "elicit_status", Arguments: map[string]any{"elicitationId": c["elicitationId"]}}); err != nil || !res.IsError {
		t.Errorf("another principal read alice's request: %v %v", text(res), err)
	}

	// Refresh rotates; revocation shuts the client out.
	tok2, err := conf.TokenSource(ctx, &oauth2.Token{RefreshToken: tok.RefreshToken}).Token()
	if err != nil || tok2.AccessToken == tok.AccessToken {
		t.Fatalf("refresh: %v", err)
	}
	resp = postForm(t, as.RevocationEndpoint, url.Values{"token": {tok2.RefreshToken}, "client_id": {reg.ClientID}, "token_type_hint": {"refresh_token"}})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("revoke: %d", resp.StatusCode)
	}
	for _, at := range []string{tok.AccessToken, tok2.AccessToken} {
		if resp := post(t, m.MCPURL, at, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`); resp.StatusCode != http.StatusUnauthorized || !strings.Contains(resp.Header.Get("WWW-Authenticate"), `error="invalid_token"`) {
			t.Errorf("a revoked token: %d %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
		}
	}
}

func post(t *testing.T, u, bearer, body string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func postForm(t *testing.T, u string, form url.Values) *http.Response {
	t.Helper()
	resp, err := http.PostForm(u, form)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func getJSON(t *testing.T, u string, v any) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d", u, resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
}

// getJSONSnake decodes snake_case members into v's CamelCase fields.
func getJSONSnake(t *testing.T, u string, v any) {
	t.Helper()
	var m map[string]any
	getJSON(t, u, &m)
	camel := map[string]any{}
	for k, val := range m {
		parts := strings.Split(k, "_")
		for i, p := range parts {
			parts[i] = strings.ToUpper(p[:1]) + p[1:]
		}
		camel[strings.Join(parts, "")] = val
	}
	b, _ := json.Marshal(camel)
	_ = json.Unmarshal(b, v)
}

// oauthAgent is an MCP client session presenting bearer.
func oauthAgent(t *testing.T, mcpURL, bearer string) *mcp.ClientSession {
	t.Helper()
	hc := oauth2.NewClient(context.Background(), oauth2.StaticTokenSource(&oauth2.Token{AccessToken: bearer}))
	c := mcp.NewClient(&mcp.Implementation{Name: "oauth-host", Version: "1"}, nil)
	s, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: mcpURL, HTTPClient: hc}, nil)
	if err != nil {
		t.Fatalf("connect %s: %v", mcpURL, err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// oauthSignIn runs a registered native client's authorization for person
// (sign-in at the provider, consent) and returns its token.
// With conf nil it registers a public client first.
func oauthSignIn(t *testing.T, base, mcpURL, person string, conf *oauth2.Config) *oauth2.Token {
	t.Helper()
	ctx := context.Background()
	if conf == nil {
		redirect := "http://127.0.0.1:7778/callback"
		resp := post(t, base+"/oauth/register", "", `{"redirect_uris":["`+redirect+`"],"client_name":"App Host","grant_types":["authorization_code"]}`)
		var reg struct {
			ClientID string `json:"client_id"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&reg); err != nil || reg.ClientID == "" {
			t.Fatalf("registration: %d %v", resp.StatusCode, err)
		}
		conf = &oauth2.Config{ClientID: reg.ClientID, RedirectURL: redirect,
			Endpoint: oauth2.Endpoint{AuthURL: base + "/oauth/authorize", TokenURL: base + "/oauth/token", AuthStyle: oauth2.AuthStyleInParams}}
	}
	redirect := conf.RedirectURL
	verifier := oauth2.GenerateVerifier()
	browser := oidctest.Browser(t)
	browser.CheckRedirect = func(req *http.Request, _ []*http.Request) error {
		if strings.HasPrefix(req.URL.String(), redirect) {
			return http.ErrUseLastResponse
		}
		return nil
	}
	resp, page, err := oidctest.SignIn(ctx, browser, conf.AuthCodeURL("s", oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("resource", mcpURL)), person)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("consent page: %v %v\n%.800s", resp, err, page)
	}
	if resp, err = allowConsent(ctx, browser, resp.Request.URL.String(), page, base); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	back, _ := url.Parse(resp.Header.Get("Location"))
	tok, err := conf.Exchange(ctx, back.Query().Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// With sign-in and OAuth, the MCP App decides as the person whose token
// the host holds, under the review page's rules: alice, named as the
// reviewer of her own request (the owner bar off), decides it in her
// host, recorded as hers via the app; a request naming bob is refused to
// her there, as on the page.
func TestOAuthPersonDecidesInTheApp(t *testing.T) {
	addr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
	p := oidctest.Start(t, "http://"+addr+reviewauth.CallbackPath)
	m := start(t, "--addr", addr, "--data-dir", t.TempDir(), "--oauth", "--mcp-app", "--bar-owner=false",
		"--oidc-issuer", p.Issuer, "--oidc-client-id", oidctest.ClientID, "--oidc-client-secret", oidctest.ClientSecret)
	tok := oauthSignIn(t, "http://"+addr, m.MCPURL, "alice", nil)
	if tok.RefreshToken != "" {
		t.Error("a refresh token for a client that did not register the refresh_token grant")
	}
	hc := oauth2.NewClient(context.Background(), oauth2.StaticTokenSource(tok))
	caps := &mcp.ClientCapabilities{Extensions: map[string]any{"io.modelcontextprotocol/ui": map[string]any{"mimeTypes": []string{"text/html;profile=mcp-app"}}}}
	c := mcp.NewClient(&mcp.Implementation{Name: "app-host", Version: "1"}, &mcp.ClientOptions{Capabilities: caps})
	s, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: m.MCPURL, HTTPClient: hc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })

	decide := func(reviewer string) (*mcp.CallToolResult, string) {
		t.Helper()
		created := call(t, s, "elicit_approval", map[string]any{"message": "ship it?", "context": 1, "reviewers": []string{reviewer}})
		id := created["elicitationId"].(string)
		view := call(t, s, "elicit_app_view", map[string]any{"elicitationId": id})
		res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "elicit_app_decide", Arguments: map[string]any{"elicitationId": id, "renderToken": view["renderToken"], "decision": "submitted"}})
		if err != nil {
			t.Fatal(err)
		}
		return res, id
	}
	if res, id := decide("alice@example.com"); res.IsError {
		t.Fatalf("alice deciding her own request in the app: %s", text(res))
	} else if r := call(t, s, "elicit_result", map[string]any{"elicitationId": id}); r["decidedBy"] != "alice@example.com" || r["decidedVia"] != "app" || r["decision"] != "submitted" {
		t.Errorf("elicit_result = %v, want submitted by alice@example.com via app", r)
	}
	res, id := decide("bob@example.com")
	if !res.IsError || !strings.HasPrefix(text(res), "forbidden: ") {
		t.Errorf("alice deciding bob's request in the app: %s, want forbidden", text(res))
	}
	if st := call(t, s, "elicit_status", map[string]any{"elicitationId": id}); st["status"] != "pending" {
		t.Errorf("after a refused decision the request is %v, want pending", st["status"])
	}
}

// An operator's pre-registered confidential client (--oauth-clients)
// signs a person in with its secret; a wrong secret is refused.
func TestOAuthOperatorClient(t *testing.T) {
	addr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
	p := oidctest.Start(t, "http://"+addr+reviewauth.CallbackPath)
	secret := strings.Repeat("s3cret", 8)
	sum := sha256.Sum256([]byte(secret))
	clients := `[{"client_id":"ops-console","client_name":"Ops console","redirect_uris":["http://127.0.0.1:7779/cb"],"token_endpoint_auth_method":"client_secret_basic","client_secret_hash":"sha256:` + hex.EncodeToString(sum[:]) + `"}]`
	m := start(t, "--addr", addr, "--data-dir", t.TempDir(), "--oauth", "--oauth-clients", clients,
		"--oidc-issuer", p.Issuer, "--oidc-client-id", oidctest.ClientID, "--oidc-client-secret", oidctest.ClientSecret)
	base := "http://" + addr
	conf := &oauth2.Config{ClientID: "ops-console", ClientSecret: secret, RedirectURL: "http://127.0.0.1:7779/cb",
		Endpoint: oauth2.Endpoint{AuthURL: base + "/oauth/authorize", TokenURL: base + "/oauth/token", AuthStyle: oauth2.AuthStyleInHeader}}
	tok := oauthSignIn(t, base, m.MCPURL, "bob", conf)
	s := oauthAgent(t, m.MCPURL, tok.AccessToken)
	if c := call(t, s, "elicit_approval", map[string]any{"message": "m", "context": 1}); c["elicitationId"] == nil {
		t.Fatalf("elicit_approval = %v", c)
	}
	// Its refresh token needs its secret: a wrong one is refused, the
	// right one rotates it.
	wrong := *conf
	wrong.ClientSecret = "wrong"
	if _, err := wrong.TokenSource(context.Background(), &oauth2.Token{RefreshToken: tok.RefreshToken}).Token(); err == nil || !strings.Contains(err.Error(), "invalid_client") {
		t.Errorf("refresh with a wrong client secret: %v, want invalid_client", err)
	}
	if _, err := conf.TokenSource(context.Background(), &oauth2.Token{RefreshToken: tok.RefreshToken}).Token(); err != nil {
		t.Errorf("refresh with the client's secret: %v", err)
	}
	// A token without the endpoint's scope: 403 insufficient_scope.
	narrow := *conf
	narrow.ClientSecret, narrow.Scopes = secret, []string{"openid"}
	tok = oauthSignIn(t, base, m.MCPURL, "bob", &narrow)
	resp := post(t, m.MCPURL, tok.AccessToken, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	if ch := resp.Header.Get("WWW-Authenticate"); resp.StatusCode != http.StatusForbidden || !strings.Contains(ch, `error="insufficient_scope"`) || !strings.Contains(ch, `scope="elicitation"`) {
		t.Errorf("a token without the scope: %d %q, want 403 insufficient_scope naming elicitation", resp.StatusCode, ch)
	}
}

// --api-keys=false: only people's OAuth tokens; an API key is refused.
func TestOAuthWithoutAPIKeys(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	if err := run(context.Background(), []string{"keys", "--data-dir", dir, "create", "--principal", "ci-bot", "--json"}, &out, io.Discard, noEnv); err != nil {
		t.Fatal(err)
	}
	var key struct{ Key string }
	_ = json.Unmarshal(out.Bytes(), &key)
	addr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
	p := oidctest.Start(t, "http://"+addr+reviewauth.CallbackPath)
	m := start(t, "--addr", addr, "--data-dir", dir, "--oauth", "--api-keys=false",
		"--oidc-issuer", p.Issuer, "--oidc-client-id", oidctest.ClientID, "--oidc-client-secret", oidctest.ClientSecret)
	if resp := post(t, m.MCPURL, key.Key, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("an API key with --api-keys=false: %d, want 401", resp.StatusCode)
	}
	tok := oauthSignIn(t, "http://"+addr, m.MCPURL, "alice", nil)
	if resp := post(t, m.MCPURL, tok.AccessToken, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`); resp.StatusCode != http.StatusOK {
		t.Errorf("an OAuth token with --api-keys=false: %d, want 200", resp.StatusCode)
	}
}

// --oauth-requests-per-source and --oauth-requests-per-client reach the
// authorization server: past them a source's, or a client's, token
// requests are refused with 429 temporarily_unavailable and Retry-After.
func TestOAuthRequestLimitSetting(t *testing.T) {
	addr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
	p := oidctest.Start(t, "http://"+addr+reviewauth.CallbackPath)
	start(t, "--addr", addr, "--data-dir", t.TempDir(), "--oauth", "--oauth-requests-per-source", "4", "--oauth-requests-per-client", "2",
		"--oidc-issuer", p.Issuer, "--oidc-client-id", oidctest.ClientID, "--oidc-client-secret", oidctest.ClientSecret)
	for i, tc := range []struct {
		client  string
		refused bool
	}{
		{"nobody", false}, {"nobody", false}, {"nobody", true}, // the client's 2
		{"a", false}, {"b", false}, {"c", true}, // the source's 4
	} {
		form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"made-up"}, "client_id": {tc.client}}
		resp, err := http.PostForm("http://"+addr+"/oauth/token", form)
		if err != nil {
			t.Fatal(err)
		}
		var e struct{ Error string }
		_ = json.NewDecoder(resp.Body).Decode(&e)
		resp.Body.Close()
		refused := resp.StatusCode == http.StatusTooManyRequests && e.Error == "temporarily_unavailable" && resp.Header.Get("Retry-After") != ""
		if refused != tc.refused {
			t.Fatalf("token request %d, client %s: %d %q Retry-After %q, want refused %v", i+1, tc.client, resp.StatusCode, e.Error, resp.Header.Get("Retry-After"), tc.refused)
		}
	}
}
