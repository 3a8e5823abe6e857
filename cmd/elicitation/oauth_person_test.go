package main

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/mcp-elicitation/elicitation/internal/reviewauth"
	"github.com/mcp-elicitation/elicitation/internal/reviewauth/oidctest"
	"github.com/mcp-elicitation/elicitation/internal/testenv"
)

// What the real-client OAuth tests share: the local server as an
// authorization server with reviewer sign-in at the real example OpenID
// provider, and the person (alice) who signs in there and consents, with
// a browser that has cookies and follows redirects but runs no script.

// startOAuth starts the local server with --oauth, signing reviewers in
// at a fresh provider; it returns the server and its base URL (the
// issuer).
func startOAuth(t *testing.T) (*Main, string) {
	t.Helper()
	addr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
	p := oidctest.Start(t, "http://"+addr+reviewauth.CallbackPath)
	m := start(t, "--addr", addr, "--data-dir", t.TempDir(), "--oauth",
		"--oidc-issuer", p.Issuer, "--oidc-client-id", oidctest.ClientID, "--oidc-client-secret", oidctest.ClientSecret)
	return m, "http://" + addr
}

// registerPublic registers a public native client for redirect through
// RFC 7591 and returns its client_id.
func registerPublic(t *testing.T, base, name, redirect string) string {
	t.Helper()
	b, _ := json.Marshal(map[string]any{
		"redirect_uris": []string{redirect}, "client_name": name, "token_endpoint_auth_method": "none",
		"grant_types": []string{"authorization_code", "refresh_token"}, "response_types": []string{"code"},
	})
	resp := post(t, base+"/oauth/register", "", string(b))
	var reg struct {
		ClientID string `json:"client_id"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&reg); err != nil || resp.StatusCode != http.StatusCreated || reg.ClientID == "" {
		t.Fatalf("register %s: HTTP %d %v %+v", name, resp.StatusCode, err, reg)
	}
	return reg.ClientID
}

// consentField is a hidden field of the consent form.
var consentField = regexp.MustCompile(`name="(id|t)" value="([^"]*)"`)

// allowAsAlice is the person at a browser: it opens authURL, signs in
// as alice at the provider, checks that the consent page names
// clientName and alice, allows, and follows the redirect back to the
// client's redirect URI, whose response it returns (body read).
func allowAsAlice(ctx context.Context, browser *http.Client, authURL, base, clientName string) (*http.Response, string, error) {
	resp, page, err := oidctest.SignIn(ctx, browser, authURL, "alice")
	if err != nil {
		return nil, "", fmt.Errorf("sign in: %w", err)
	}
	if resp.StatusCode != http.StatusOK || resp.Request.URL.Path != "/review/oauth/consent" ||
		!strings.Contains(page, html.EscapeString(clientName)) || !strings.Contains(page, "alice@example.com") {
		return nil, "", fmt.Errorf("no consent page for %s and alice: HTTP %d at %s\n%.1500s", clientName, resp.StatusCode, resp.Request.URL, page)
	}
	resp, err = allowConsent(ctx, browser, resp.Request.URL.String(), page, base)
	if err != nil {
		return nil, "", fmt.Errorf("allow: %w", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp, string(b), err
}

// allowConsent posts Allow on the consent page at consentURL, whose HTML
// is page, from base's origin, as the browser's form would.
func allowConsent(ctx context.Context, browser *http.Client, consentURL, page, base string) (*http.Response, error) {
	form := url.Values{"decision": {"allow"}}
	for _, f := range consentField.FindAllStringSubmatch(page, -1) {
		form.Set(f[1], html.UnescapeString(f[2]))
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, consentURL, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", base)
	return browser.Do(req)
}
