// Package oidctest runs a real OpenID provider for tests: the example
// provider of github.com/zitadel/oidc/v3, built from the Go module proxy
// into .bin on first use and started as its own process, with the users
// of Users and the confidential client ClientID/ClientSecret registered
// for the redirect URIs a test gives.
package oidctest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/testenv"
)

// Module is the provider's Go package, at the version the tests pin.
const Module = "github.com/zitadel/oidc/v3/example/server@v3.52.0"

// The client the example provider registers (storage.WebClient("web",
// "secret", REDIRECT_URI...)): confidential, client_secret_basic, code flow.
const (
	ClientID     = "web"
	ClientSecret = "secret"
)

// Password is every test user's password.
const Password = "verysecure"

// User is a test account: its login name, subject and e-mail address
// (verified unless Unverified).
type User struct {
	Username, Subject, Email string
	Unverified               bool
}

// Users are the accounts of every provider this package starts.
var Users = []User{
	{Username: "alice", Subject: "id-alice", Email: "alice@example.com"},
	{Username: "bob", Subject: "id-bob", Email: "bob@example.com"},
	{Username: "mallory", Subject: "id-mallory", Email: "mallory@example.com"},
	{Username: "agent", Subject: "id-agent", Email: "agent@example.com"},
	{Username: "eve", Subject: "id-eve", Email: "bob@example.com", Unverified: true},
	{Username: "test-user2", Subject: "id2", Email: "test-user2@zitadel.ch"},
}

// Provider is a running provider.
type Provider struct {
	// Issuer is its issuer URL (http://localhost:PORT/).
	Issuer string
	Log    *testenv.SyncBuffer
}

// Start builds (once) and starts a provider that accepts redirectURIs,
// and stops it when t ends.
func Start(t testing.TB, redirectURIs ...string) *Provider {
	t.Helper()
	bin := testenv.GoTool(t, Module, "server")
	dir := t.TempDir()
	users := map[string]any{}
	for _, u := range Users {
		users[u.Subject] = map[string]any{
			"ID": u.Subject, "Username": u.Username, "Password": Password, "FirstName": u.Username, "LastName": "Test",
			"Email": u.Email, "EmailVerified": !u.Unverified, "PreferredLanguage": "en",
		}
	}
	b, _ := json.Marshal(users)
	usersFile := filepath.Join(dir, "users.json")
	if err := os.WriteFile(usersFile, b, 0o600); err != nil {
		t.Fatal(err)
	}
	port := testenv.FreePort(t)
	p := &Provider{Issuer: fmt.Sprintf("http://localhost:%d/", port), Log: &testenv.SyncBuffer{}}
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "PORT="+strconv.Itoa(port), "USERS_FILE="+usersFile, "REDIRECT_URI="+strings.Join(redirectURIs, ","))
	cmd.Stdout, cmd.Stderr = p.Log, p.Log
	if err := cmd.Start(); err != nil {
		t.Fatalf("start the OpenID provider: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get(p.Issuer + ".well-known/openid-configuration")
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the OpenID provider did not answer on %s: %v\n%s", p.Issuer, err, p.Log.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Browser is an HTTP client with a cookie jar that follows redirects, as
// a browser without script would.
func Browser(t testing.TB) *http.Client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Jar: jar, Timeout: 30 * time.Second}
}

var authRequestID = regexp.MustCompile(`name="id" value="([^"]+)"`)

// SignIn opens pageURL with c and, when it lands on the provider's login
// form, signs in as username; it returns the final response (its body
// read into Body). Redirects are followed, as a browser does.
func SignIn(ctx context.Context, c *http.Client, pageURL, username string) (*http.Response, string, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, pageURL, nil)
	resp, body, err := do(c, req)
	if err != nil {
		return nil, "", err
	}
	m := authRequestID.FindStringSubmatch(body)
	if m == nil || !strings.Contains(resp.Request.URL.Path, "/login/username") {
		return resp, body, nil // no login form: already signed in, or refused
	}
	form := url.Values{"id": {m[1]}, "username": {username}, "password": {Password}}
	u := resp.Request.URL.ResolveReference(&url.URL{Path: "/login/username"})
	req, _ = http.NewRequestWithContext(ctx, http.MethodPost, u.String(), strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return do(c, req)
}

func do(c *http.Client, req *http.Request) (*http.Response, string, error) {
	resp, err := c.Do(req)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp, string(b), err
}
