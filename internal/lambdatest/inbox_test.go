//go:build unix

package lambdatest_test

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/lambdatest"
	"github.com/mcp-elicitation/elicitation/internal/reviewauth"
	"github.com/mcp-elicitation/elicitation/internal/reviewauth/oidctest"
	"github.com/mcp-elicitation/elicitation/internal/testenv"
)

// The reviewer's inbox on the review function under the emulator, behind
// a stand-in for API Gateway with template.yaml's routes, on DynamoDB
// Local through the IAM enforcer (the function's policy must allow the
// Query of the pending index): Bob signs in at /review, sees both pending
// requests, opens one at /review/{id} without its key and decides it
// through the submit function; the inbox then lists the other one only,
// which a batch (POST /review, the submit function) leaves out: it has a
// form to fill.
func TestInboxOnLambda(t *testing.T) {
	testenv.Slow(t, "Lambda emulator")
	t.Parallel()
	var s *stack
	gw := lambdatest.Gateway(t, func(method, path string) (string, *lambdatest.Function) {
		// template.yaml's routes (HTTP API routes /review/ as /review).
		rest, ok := strings.CutPrefix(path, "/review")
		segs := strings.FieldsFunc(rest, func(r rune) bool { return r == '/' })
		if !ok || rest != "" && rest[0] != '/' || len(segs) > 2 {
			return "", nil
		}
		route := []string{"/review", "/review/{id}", "/review/{id}/{key}"}[len(segs)]
		switch {
		case method == http.MethodGet:
			return "GET " + route, s.fn["review"]
		case method == http.MethodPost:
			return "POST " + route, s.fn["submit"]
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
	sel := mustTool(t, s.fn["mcp"], event(t, "mcp-elicit-selection", phKey, s.keys["alice"]))
	appr := mustTool(t, s.fn["mcp"], event(t, "mcp-elicit-approval", phKey, s.keys["alice"]))

	bob := oidctest.Browser(t)
	resp, body, err := oidctest.SignIn(context.Background(), bob, gw.URL+"/review", "bob")
	if err != nil {
		t.Fatal(err)
	}
	rows := func(body string) []string {
		var out []string
		for _, m := range regexp.MustCompile(`<a class="open" href="\./([^"]+)">`).FindAllStringSubmatch(body, -1) {
			out = append(out, m[1])
		}
		return out
	}
	if resp.StatusCode != http.StatusOK || resp.Request.URL.Path != "/review/" || len(rows(body)) != 2 || !strings.Contains(body, "<title>Inbox (2)") {
		t.Fatalf("bob's inbox at %s: %d, rows %v\n%.1500s", resp.Request.URL, resp.StatusCode, rows(body), body)
	}
	if !strings.Contains(body, "Which domains should we register?") || !strings.Contains(body, "Deploy billing-api v2.4.1 to production?") {
		t.Errorf("the inbox lacks a headline:\n%.2000s", body)
	}
	// The row's link: the page without the key, then the decision.
	page := gw.URL + "/review/" + sel.ElicitationID
	get := func(u string) (int, string) {
		t.Helper()
		resp, err := bob.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	code, body := get(page)
	m := regexp.MustCompile(`name="token" value="([^"]+)"`).FindStringSubmatch(body)
	if code != http.StatusOK || m == nil {
		t.Fatalf("the keyless page: %d\n%.1000s", code, body)
	}
	req, _ := http.NewRequest(http.MethodPost, page, strings.NewReader(url.Values{"token": {m[1]}, "decision": {"submitted"}, "option": {"a"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", gw.URL)
	resp, err = bob.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), "Selection sent") {
		t.Fatalf("the keyless decision: %d\n%.1000s", resp.StatusCode, b)
	}
	if out, _ := tool(t, s.fn["mcp"], event(t, "mcp-elicit-status", phKey, s.keys["alice"], phID, sel.ElicitationID)); out.Status != "submitted" {
		t.Fatalf("after bob's decision: %+v", out)
	}
	if code, body := get(gw.URL + "/review/"); code != http.StatusOK || len(rows(body)) != 1 || rows(body)[0] != appr.ElicitationID {
		t.Errorf("the inbox after the decision: %d, rows %v", code, rows(body))
	}
	// A batch through the submit function (POST /review): every request
	// waiting, listed for confirmation (its IAM policy must allow the
	// pending index's query and the delegations' reads); the approval has
	// a form to fill, so it is left out, and nothing is decided.
	post := func(form url.Values) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, gw.URL+"/review/", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", gw.URL)
		resp, err := bob.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	code, body = post(url.Values{"decision": {"declined"}, "all": {"1"}})
	if code != http.StatusOK || !strings.Contains(body, "Nothing here can be decided at once") || !strings.Contains(body, "Left out: it has a form to fill.") || strings.Contains(body, `name="token"`) {
		t.Fatalf("the batch's confirmation: %d\n%.2000s", code, body)
	}
	if out, _ := tool(t, s.fn["mcp"], event(t, "mcp-elicit-status", phKey, s.keys["alice"], phID, appr.ElicitationID)); out.Status != "pending" {
		t.Fatalf("after bob's batch: %+v", out)
	}
	// Out of office: the submit function writes the delegation, the review
	// function's inbox (after the redirect) lists it.
	// (The form's page token from the review function's inbox.)
	_, inbox := get(gw.URL + "/review/")
	dm := regexp.MustCompile(`class="delegate">\n<input type="hidden" name="token" value="([^"]+)"`).FindStringSubmatch(inbox)
	if dm == nil {
		t.Fatalf("the inbox's out-of-office form has no token:\n%.2000s", inbox)
	}
	code, body = post(url.Values{"token": {dm[1]}, "delegate": {"1"}, "to": {"carol@example.com"}, "end": {time.Now().UTC().Add(time.Hour).Format("2006-01-02T15:04")}})
	if code != http.StatusOK || !strings.Contains(body, "<strong>carol@example.com</strong> decides for you until") {
		t.Fatalf("bob's delegation: %d\n%.2000s", code, body)
	}
}
