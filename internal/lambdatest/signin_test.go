//go:build unix

package lambdatest_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mcp-elicitation/elicitation/internal/lambdatest"
	"github.com/mcp-elicitation/elicitation/internal/reviewauth"
	"github.com/mcp-elicitation/elicitation/internal/reviewauth/oidctest"
	"github.com/mcp-elicitation/elicitation/internal/testenv"
)

const oidcSecretARN = "arn:aws:secretsmanager:us-east-1:123456789012:secret:OidcClientSecret-XyZ"

// Reviewer sign-in on the review and submit functions under the emulator,
// behind a stand-in for API Gateway, against a real OpenID provider: the
// review function redirects to the issuer and completes the sign-in (the
// client secret read from Secrets Manager), the submit function checks
// the session cookie the review function set, and a quorum of two is
// reached by two reviewers and not by one twice.
func TestSignIn(t *testing.T) {
	testenv.Slow(t, "Lambda emulator")
	t.Parallel()
	var s *stack
	gw := lambdatest.Gateway(t, func(method, path string) (string, *lambdatest.Function) {
		switch {
		case method == http.MethodGet && strings.HasPrefix(path, "/review/"):
			return "GET /review/{id}/{key}", s.fn["review"]
		case method == http.MethodPost && strings.HasPrefix(path, "/review/"):
			return "POST /review/{id}/{key}", s.fn["submit"]
		}
		return "", nil
	})
	p := oidctest.Start(t, gw.URL+reviewauth.CallbackPath)
	s = newStack(t, stackOptions{
		allEnv: []string{
			"ELICITATION_PUBLIC_URL=" + gw.URL, "ELICITATION_OIDC_ISSUER=" + p.Issuer, "ELICITATION_OIDC_CLIENT_ID=" + oidctest.ClientID,
			"ELICITATION_OIDC_CLIENT_SECRET_ARN=" + oidcSecretARN,
		},
		secrets: map[string]string{oidcSecretARN: oidctest.ClientSecret},
	})
	ev := strings.Replace(string(event(t, "mcp-elicit-selection", phKey, s.keys["alice"])), `\"timeoutSeconds\":900}`, `\"timeoutSeconds\":900,\"approvals\":2}`, 1)
	sel := mustTool(t, s.fn["mcp"], []byte(ev))
	if !strings.HasPrefix(sel.ReviewURL, gw.URL+"/review/") {
		t.Fatalf("reviewUrl %q, want under %s", sel.ReviewURL, gw.URL)
	}

	// Unsigned: the review function sends the browser to the issuer; a
	// POST without a session is refused by the submit function.
	noFollow := oidctest.Browser(t)
	noFollow.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := noFollow.Get(sel.ReviewURL)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusFound || !strings.HasPrefix(resp.Header.Get("Location"), p.Issuer) {
		t.Fatalf("unsigned GET: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	if resp, err := noFollow.PostForm(sel.ReviewURL, url.Values{"token": {"x"}, "decision": {"submitted"}, "option": {"a"}}); err != nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("unsigned POST: %v %v", resp, err)
	}

	approve := func(b *http.Client, user string) (int, string) {
		t.Helper()
		resp, body, err := oidctest.SignIn(context.Background(), b, sel.ReviewURL, user)
		if err != nil {
			t.Fatal(err)
		}
		m := regexp.MustCompile(`name="token" value="([^"]+)"`).FindStringSubmatch(body)
		if resp.StatusCode != http.StatusOK || m == nil {
			t.Fatalf("%s's page: %d\n%.1000s", user, resp.StatusCode, body)
		}
		resp, err = b.PostForm(sel.ReviewURL, url.Values{"token": {m[1]}, "decision": {"submitted"}, "option": {"a"}})
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var sb strings.Builder
		buf := make([]byte, 32<<10)
		for {
			n, err := resp.Body.Read(buf)
			sb.Write(buf[:n])
			if err != nil {
				break
			}
		}
		return resp.StatusCode, sb.String()
	}
	alice := oidctest.Browser(t)
	if code, body := approve(alice, "alice"); code != http.StatusOK || !strings.Contains(body, "Your approval is counted") {
		t.Fatalf("alice: %d\n%.1000s", code, body)
	}
	if n := s.sm.ReadsOf(oidcSecretARN); n != 1 {
		t.Errorf("the OpenID client secret was read %d times, want once (by the review function)", n)
	}
	if code, _ := approve(alice, "alice"); code != http.StatusConflict {
		t.Fatalf("alice again: %d, want 409", code)
	}
	if out, _ := tool(t, s.fn["mcp"], event(t, "mcp-elicit-status", phKey, s.keys["alice"], phID, sel.ElicitationID)); out.Status != "pending" {
		t.Fatalf("after one reviewer twice: %+v", out)
	}
	// Forged submissions through the submit function, refused by the
	// review routes' one origin rule and the token binding: Bob's own
	// page's form posted by a page on another port (Sec-Fetch-Site:
	// same-site), and Alice's token sent from Bob's session.
	bob := oidctest.Browser(t)
	token := func(b *http.Client, user string) string {
		t.Helper()
		_, body, err := oidctest.SignIn(context.Background(), b, sel.ReviewURL, user)
		m := regexp.MustCompile(`name="token" value="([^"]+)"`).FindStringSubmatch(body)
		if err != nil || m == nil {
			t.Fatalf("%s's page: %v\n%.600s", user, err, body)
		}
		return m[1]
	}
	forged := func(tok string, hdr map[string]string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, sel.ReviewURL, strings.NewReader(url.Values{"token": {tok}, "decision": {"submitted"}, "option": {"a"}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := bob.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := forged(token(bob, "bob"), map[string]string{"Sec-Fetch-Site": "same-site", "Origin": "http://127.0.0.1:1"}); code != http.StatusForbidden || !strings.Contains(body, "This answer came from another site") {
		t.Fatalf("a same-site forgery through the submit function: %d\n%.600s", code, body)
	}
	if code, body := forged(token(alice, "alice"), nil); code != http.StatusForbidden || !strings.Contains(body, "This page cannot send an answer") {
		t.Fatalf("alice's token from bob's session through the submit function: %d\n%.600s", code, body)
	}
	if out, _ := tool(t, s.fn["mcp"], event(t, "mcp-elicit-status", phKey, s.keys["alice"], phID, sel.ElicitationID)); out.Status != "pending" {
		t.Fatalf("after the forgeries: %+v", out)
	}
	if code, body := approve(bob, "bob"); code != http.StatusOK || !strings.Contains(body, "Selection sent") {
		t.Fatalf("bob: %d\n%.1000s", code, body)
	}
	r, _ := rpc(t, s.fn["mcp"], event(t, "mcp-elicit-result", phKey, s.keys["alice"], phID, sel.ElicitationID))
	var res struct {
		Decision   string   `json:"decision"`
		DecidedBy  *string  `json:"decidedBy"`
		ApprovedBy []string `json:"approvedBy"`
	}
	if err := json.Unmarshal(r.StructuredContent, &res); err != nil || res.Decision != "submitted" || res.DecidedBy == nil || *res.DecidedBy != "bob@example.com" ||
		!slices.Equal(res.ApprovedBy, []string{"alice@example.com", "bob@example.com"}) {
		t.Fatalf("elicit_result: %s (%v)", r.StructuredContent, err)
	}
}
