package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/reviewauth"
	"github.com/mcp-elicitation/elicitation/internal/reviewauth/oidctest"
	"github.com/mcp-elicitation/elicitation/internal/testenv"
)

// The local server with reviewer sign-in against a real OpenID provider:
// the banner says a link alone decides nothing, a request names its
// reviewer over MCP, the reviewer signs in and decides, and elicit_result
// says who; the inbox lists the request for bob only. Without sign-in the
// banner says what a link grants, and reviewers are refused.
func TestServeWithSignIn(t *testing.T) {
	addr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
	p := oidctest.Start(t, "http://"+addr+reviewauth.CallbackPath)
	m := start(t, "--addr", addr, "--data-dir", t.TempDir(),
		"--oidc-issuer", p.Issuer, "--oidc-client-id", oidctest.ClientID, "--oidc-client-secret", oidctest.ClientSecret)
	var banner bytes.Buffer
	m.PrintWelcome(&banner)
	if !strings.Contains(banner.String(), "Reviewers sign in with "+p.Issuer+": a review link alone decides nothing.") {
		t.Errorf("banner does not say reviewers sign in:\n%s", banner.String())
	}
	s := agent(t, m.MCPURL)
	c := call(t, s, "elicit_selection", map[string]any{"message": "Which?", "options": []map[string]any{{"id": "a"}, {"id": "b"}}, "reviewers": []string{"bob@example.com"}})
	u := c["reviewUrl"].(string)

	mallory := oidctest.Browser(t)
	if resp, _, err := oidctest.SignIn(context.Background(), mallory, u, "mallory"); err != nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("mallory: %v %v", resp, err)
	}
	bob := oidctest.Browser(t)
	resp, body, err := oidctest.SignIn(context.Background(), bob, u, "bob")
	if err != nil || resp.StatusCode != http.StatusOK || !strings.Contains(body, "Signed in as <strong>bob@example.com</strong>") {
		t.Fatalf("bob's page: %v %v\n%.500s", resp, err, body)
	}
	// The local server's inbox: bob's lists the request, whose row opens
	// its page without the key; mallory's (signed in, not named) is empty.
	inbox := "http://" + addr + "/review/"
	row := `<a class="open" href="./` + c["elicitationId"].(string) + `">Which?</a>`
	for who, want := range map[*http.Client]bool{bob: true, mallory: false} {
		r, err := who.Get(inbox)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(r.Body)
		_ = r.Body.Close()
		if r.StatusCode != http.StatusOK || strings.Contains(string(b), row) != want {
			t.Errorf("the inbox (row wanted: %v): %d\n%.800s", want, r.StatusCode, b)
		}
	}
	tok := regexp.MustCompile(`name="token" value="([^"]+)"`).FindStringSubmatch(body)
	resp, err = bob.PostForm(u, url.Values{"token": {tok[1]}, "decision": {"submitted"}, "option": {"b"}})
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("bob's submission: %d", resp.StatusCode)
	}
	res := call(t, s, "elicit_result", map[string]any{"elicitationId": c["elicitationId"]})
	if res["decidedBy"] != "bob@example.com" {
		t.Errorf("elicit_result = %v, want decidedBy bob@example.com", res)
	}
}

func TestServeWithoutSignIn(t *testing.T) {
	m := start(t, "--data-dir", t.TempDir())
	var banner bytes.Buffer
	m.PrintWelcome(&banner)
	if !strings.Contains(banner.String(), "No reviewer sign-in: a review link is a capability. Whoever holds it decides") {
		t.Errorf("banner does not say what a review link grants:\n%s", banner.String())
	}
	s := agent(t, m.MCPURL)
	res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "elicit_approval", Arguments: map[string]any{"message": "m", "context": 1, "reviewers": []string{"bob@example.com"}}})
	if err != nil || !res.IsError || !strings.HasPrefix(text(res), "invalid_argument: reviewers needs reviewer sign-in") {
		t.Fatalf("reviewers without sign-in: %v %v", text(res), err)
	}
}

// Sign-in refuses a public URL that would carry the session in the clear.
func TestSignInNeedsHTTPS(t *testing.T) {
	cfg, err := parseServe([]string{"--addr", "127.0.0.1:0", "--data-dir", t.TempDir(), "--public-url", "http://192.0.2.10:8080",
		"--oidc-issuer", "https://id.example.com/", "--oidc-client-id", "c"}, io.Discard, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if m, err := Start(context.Background(), cfg, io.Discard); err == nil || !strings.Contains(err.Error(), "needs an https public URL") {
		if m != nil {
			_ = m.Close()
		}
		t.Fatalf("Start = %v, want a refusal of the plain-http public URL", err)
	}
}
