//go:build unix

package lambdatest_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/mcp-elicitation/elicitation/internal/dynamostore/dynamotest"
	"github.com/mcp-elicitation/elicitation/internal/lambdatest"
	"github.com/mcp-elicitation/elicitation/internal/reviewauth"
	"github.com/mcp-elicitation/elicitation/internal/reviewauth/oidctest"
	"github.com/mcp-elicitation/elicitation/internal/testenv"
)

var oauthBuild struct {
	sync.Once
	path string
}

// startOAuth builds (once per test binary, beside the stack's
// bootstraps) and starts the OAuth function on s's table and secrets,
// behind an IAM enforcer of its template.yaml policy, with env added.
func startOAuth(t *testing.T, s *stack, env ...string) *lambdatest.Function {
	t.Helper()
	oauthBuild.Do(func() {
		oauthBuild.path = lambdatest.Build(t, "OAuthFunction", filepath.Join(buildDir, "oauth"))
	})
	if oauthBuild.path == "" {
		t.Fatal("the OAuth function was not built (see the first failure)")
	}
	e := lambdatest.NewEnforcer(t, "OAuthFunction", lambdatest.Policies(t)["OAuthFunction"], dynamotest.Endpoint(t))
	t.Cleanup(func() {
		for _, d := range e.Denied() {
			t.Errorf("IAM would refuse a call of the OAuth function: %s", d)
		}
		if t.Failed() || testing.Verbose() {
			t.Logf("OAuth function's DynamoDB accesses: %s", strings.Join(e.Calls(), ", "))
		}
	})
	env = append([]string{
		"ELICITATION_TABLE=" + s.table, "ELICITATION_LOG_LEVEL=debug",
		"AWS_REGION=us-east-1", "AWS_ACCESS_KEY_ID=dummy", "AWS_SECRET_ACCESS_KEY=dummy", "AWS_SESSION_TOKEN=dummy",
		"AWS_ENDPOINT_URL_DYNAMODB=" + e.URL,
		"ELICITATION_TOKEN_SECRET_ARN=" + tokenSecretARN, "AWS_ENDPOINT_URL_SECRETS_MANAGER=" + s.sm.URL,
	}, env...)
	return lambdatest.Start(t, "OAuthFunction", oauthBuild.path, 8*time.Second, env...)
}

// OAuth on the Lambda path, behind a stand-in for API Gateway routing as
// template.yaml does: a host registers with the OAuth function, the person
// signs in at a real OpenID provider (the callback on the review function)
// and consents, the code is redeemed for a token, the MCP function accepts
// the token (the request it creates is the person's), and after the token
// is revoked through the OAuth function the MCP function refuses it.
func TestOAuth(t *testing.T) {
	testenv.Slow(t, "Lambda emulator")
	t.Parallel()
	ctx := context.Background()
	var (
		s     *stack
		oauth *lambdatest.Function
	)
	gw := lambdatest.Gateway(t, func(method, path string) (string, *lambdatest.Function) {
		switch {
		case path == "/mcp":
			return "ANY /mcp", s.fn["mcp"]
		case path == "/review/oauth/consent" || strings.HasPrefix(path, "/oauth/") || strings.HasPrefix(path, "/.well-known/"):
			return method + " " + path, oauth
		case method == http.MethodGet && strings.HasPrefix(path, "/review/"):
			return "GET /review/{id}/{key}", s.fn["review"]
		case method == http.MethodPost && strings.HasPrefix(path, "/review/"):
			return "POST /review/{id}/{key}", s.fn["submit"]
		}
		return "", nil
	})
	p := oidctest.Start(t, gw.URL+reviewauth.CallbackPath)
	signIn := []string{
		"ELICITATION_PUBLIC_URL=" + gw.URL, "ELICITATION_OIDC_ISSUER=" + p.Issuer, "ELICITATION_OIDC_CLIENT_ID=" + oidctest.ClientID,
		"ELICITATION_OIDC_CLIENT_SECRET_ARN=" + oidcSecretARN, "ELICITATION_OAUTH=true",
	}
	s = newStack(t, stackOptions{
		allEnv: signIn,
		// As template.yaml sets it with OAuth on; no cache of live token
		// families, so that the revocation below is seen at once.
		extraEnv: []string{"ELICITATION_TOKEN_SECRET_ARN=" + tokenSecretARN, "ELICITATION_OAUTH_REVOCATION_CACHE_TTL=0s"},
		secrets:  map[string]string{oidcSecretARN: oidctest.ClientSecret},
	})
	oauth = startOAuth(t, s, signIn...)
	resource := gw.URL + "/mcp"

	// The challenge names the metadata, which the OAuth function serves.
	resp := mcpPost(t, resource, "", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(resp.Header.Get("WWW-Authenticate"), `resource_metadata="`+gw.URL+`/.well-known/oauth-protected-resource/mcp"`) {
		t.Fatalf("unauthenticated call: %d %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
	var prm struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
	}
	getJSON(t, gw.URL+"/.well-known/oauth-protected-resource/mcp", &prm)
	if prm.Resource != resource || len(prm.AuthorizationServers) != 1 || prm.AuthorizationServers[0] != gw.URL {
		t.Fatalf("protected resource metadata = %+v", prm)
	}
	var as struct {
		Issuer                string `json:"issuer"`
		AuthorizationEndpoint string `json:"authorization_endpoint"`
		TokenEndpoint         string `json:"token_endpoint"`
		RegistrationEndpoint  string `json:"registration_endpoint"`
		RevocationEndpoint    string `json:"revocation_endpoint"`
	}
	getJSON(t, gw.URL+"/.well-known/oauth-authorization-server", &as)
	if as.Issuer != gw.URL || as.RegistrationEndpoint == "" || as.RevocationEndpoint == "" {
		t.Fatalf("authorization server metadata = %+v", as)
	}

	// Dynamic registration of a native client.
	redirect := "http://127.0.0.1:7777/callback"
	resp = mcpPost(t, as.RegistrationEndpoint, "", `{"redirect_uris":["`+redirect+`"],"client_name":"Lambda Host","token_endpoint_auth_method":"none","grant_types":["authorization_code","refresh_token"]}`)
	var reg struct {
		ClientID string `json:"client_id"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&reg); err != nil || resp.StatusCode != http.StatusCreated || reg.ClientID == "" {
		t.Fatalf("registration: %d %v %+v", resp.StatusCode, err, reg)
	}
	conf := &oauth2.Config{ClientID: reg.ClientID, RedirectURL: redirect, Scopes: []string{"elicitation"},
		Endpoint: oauth2.Endpoint{AuthURL: as.AuthorizationEndpoint, TokenURL: as.TokenEndpoint, AuthStyle: oauth2.AuthStyleInParams}}

	// Alice signs in (the callback on the review function), consents on
	// the OAuth function's page, and the browser goes back to the host.
	verifier := oauth2.GenerateVerifier()
	browser := oidctest.Browser(t)
	browser.CheckRedirect = func(req *http.Request, _ []*http.Request) error {
		if strings.HasPrefix(req.URL.String(), redirect) {
			return http.ErrUseLastResponse
		}
		return nil
	}
	authURL := conf.AuthCodeURL("st", oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("resource", resource))
	resp, page, err := oidctest.SignIn(ctx, browser, authURL, "alice")
	if err != nil || resp.StatusCode != http.StatusOK || !strings.Contains(page, "Lambda Host") || !strings.Contains(page, "alice@example.com") {
		t.Fatalf("consent page: %v %v\n%.1500s", resp, err, page)
	}
	form := url.Values{"decision": {"allow"}}
	for _, f := range regexp.MustCompile(`name="(id|t)" value="([^"]*)"`).FindAllStringSubmatch(page, -1) {
		form.Set(f[1], f[2])
	}
	req, _ := http.NewRequest(http.MethodPost, resp.Request.URL.String(), strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", gw.URL)
	if resp, err = browser.Do(req); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	back, _ := url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode != http.StatusSeeOther || back.Query().Get("iss") != gw.URL || back.Query().Get("state") != "st" {
		t.Fatalf("consent answer: %d %s", resp.StatusCode, back)
	}
	tok, err := conf.Exchange(ctx, back.Query().Get("code"), oauth2.VerifierOption(verifier), oauth2.SetAuthURLParam("resource", resource))
	if err != nil {
		t.Fatal(err)
	}

	// The MCP function takes the token: what it creates is alice's.
	created := mcpCall(t, resource, tok.AccessToken, "elicit_approval", map[string]any{"message": "deploy?", "context": map[string]any{"v": 1}})
	status := mcpCall(t, resource, tok.AccessToken, "elicit_status", map[string]any{"elicitationId": created["elicitationId"], "includeAudit": true})
	if b, _ := json.Marshal(status["audit"]); !strings.Contains(string(b), `"principal":"alice@example.com"`) {
		t.Errorf("the audit trail does not name alice as the requester: %s", b)
	}

	// Revoked through the OAuth function, refused by the MCP function.
	resp, err = http.PostForm(as.RevocationEndpoint, url.Values{"token": {tok.AccessToken}, "client_id": {reg.ClientID}, "token_type_hint": {"access_token"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("revoke: %d", resp.StatusCode)
	}
	resp = mcpPost(t, resource, tok.AccessToken, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(resp.Header.Get("WWW-Authenticate"), `error="invalid_token"`) {
		t.Fatalf("a revoked token: %d %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
	if _, err := conf.TokenSource(ctx, &oauth2.Token{RefreshToken: tok.RefreshToken}).Token(); err == nil {
		t.Error("the revoked grant's refresh token still works")
	}
}

// mcpPost posts body to u as an MCP client does (a bearer token unless
// empty); the body is closed when the test ends.
func mcpPost(t *testing.T, u, bearer, body string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
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

// mcpCall calls a tool at u with bearer and returns its structured
// content; anything but a successful result fails the test.
func mcpCall(t *testing.T, u, bearer, name string, args map[string]any) map[string]any {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": map[string]any{"name": name, "arguments": args}})
	resp := mcpPost(t, u, bearer, string(b))
	raw, _ := io.ReadAll(resp.Body)
	var msg struct {
		Result *struct {
			IsError           bool           `json:"isError"`
			StructuredContent map[string]any `json:"structuredContent"`
		} `json:"result"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(raw, &msg) != nil || msg.Result == nil || msg.Result.IsError {
		t.Fatalf("%s: %d %s", name, resp.StatusCode, raw)
	}
	return msg.Result.StructuredContent
}

func getJSON(t *testing.T, u string, v any) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v", u, resp.StatusCode, err)
	}
}
