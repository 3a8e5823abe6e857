//go:build unix

package lambdatest_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/mcp-elicitation/elicitation/internal/lambdatest"
	"github.com/mcp-elicitation/elicitation/internal/reviewauth"
	"github.com/mcp-elicitation/elicitation/internal/reviewauth/oidctest"
	"github.com/mcp-elicitation/elicitation/internal/testenv"
)

// TestInsightsOnLambda: the Insights page on the review function under the
// emulator, behind template.yaml's routes, on DynamoDB Local through the
// IAM enforcer (the function's policy must allow the Query of the
// keys-only retain index and the reads of the requests): Bob signs in and
// sees the two requests Alice created, pending.
func TestInsightsOnLambda(t *testing.T) {
	testenv.Slow(t, "Lambda emulator")
	t.Parallel()
	var s *stack
	gw := lambdatest.Gateway(t, func(method, path string) (string, *lambdatest.Function) {
		rest, ok := strings.CutPrefix(path, "/review")
		segs := strings.FieldsFunc(rest, func(r rune) bool { return r == '/' })
		if !ok || rest != "" && rest[0] != '/' || len(segs) > 2 || method != http.MethodGet {
			return "", nil
		}
		return "GET " + []string{"/review", "/review/{id}", "/review/{id}/{key}"}[len(segs)], s.fn["review"]
	})
	p := oidctest.Start(t, gw.URL+reviewauth.CallbackPath)
	s = newStack(t, stackOptions{
		allEnv: []string{
			"ELICITATION_PUBLIC_URL=" + gw.URL, "ELICITATION_OIDC_ISSUER=" + p.Issuer, "ELICITATION_OIDC_CLIENT_ID=" + oidctest.ClientID,
			"ELICITATION_OIDC_CLIENT_SECRET_ARN=" + oidcSecretARN,
		},
		secrets: map[string]string{oidcSecretARN: oidctest.ClientSecret},
	})
	mustTool(t, s.fn["mcp"], event(t, "mcp-elicit-selection", phKey, s.keys["alice"]))
	mustTool(t, s.fn["mcp"], event(t, "mcp-elicit-approval", phKey, s.keys["alice"]))

	bob := oidctest.Browser(t)
	if _, _, err := oidctest.SignIn(context.Background(), bob, gw.URL+"/review", "bob"); err != nil {
		t.Fatal(err)
	}
	resp, err := bob.Get(gw.URL + "/review/insights")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	body := string(b)
	total, _, _ := strings.Cut(body, "</dl>")
	if resp.StatusCode != http.StatusOK || !strings.Contains(total, "<dt>Created</dt><dd>2</dd>") || !strings.Contains(total, "<dt>Pending now</dt><dd>2</dd>") ||
		!strings.Contains(body, "<h3>alice ") {
		t.Fatalf("insights: %d\n%.3000s", resp.StatusCode, body)
	}
	if denied := s.enforcers["review"].Denied(); len(denied) > 0 {
		t.Errorf("the review function's policy refused %v", denied)
	}
}
