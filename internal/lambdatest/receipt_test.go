//go:build unix

package lambdatest_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/mcp-elicitation/elicitation/internal/lambdatest"
	"github.com/mcp-elicitation/elicitation/internal/signing"
	"github.com/mcp-elicitation/elicitation/internal/testenv"
	"github.com/mcp-elicitation/elicitation/receipt"
)

// On AWS, with OAuth off, elicit_result carries a receipt signed by the
// MCP function with the keys derived from the stack's token secret, and
// the key set the review function publishes at /.well-known/jwks.json
// (fetched over HTTP through the gateway stand-in) verifies it.
func TestReceiptOnLambda(t *testing.T) {
	testenv.Slow(t, "Lambda emulator")
	t.Parallel()
	s := newStack(t, stackOptions{})
	gw := lambdatest.Gateway(t, func(method, path string) (string, *lambdatest.Function) {
		if method == http.MethodGet && path == signing.JWKSPath {
			return "GET " + signing.JWKSPath, s.fn["review"]
		}
		return "", nil
	})
	alice := s.keys["alice"]
	created := mustTool(t, s.fn["mcp"], event(t, "mcp-elicit-approval", phKey, alice))
	id, key := reviewParts(t, created.ReviewURL)
	page, _ := s.fn["review"].Invoke(t, event(t, "review-get", phID, id, phRKey, key))
	if page.StatusCode != http.StatusOK {
		t.Fatalf("review page: %d", page.StatusCode)
	}
	if sub, _ := s.fn["submit"].Invoke(t, event(t, "submit-valid", phID, id, phRKey, key, phToken, pageToken(t, page.Body))); sub.StatusCode != http.StatusOK {
		t.Fatalf("submission: %d\n%.2000s", sub.StatusCode, sub.Body)
	}
	r, _ := rpc(t, s.fn["mcp"], event(t, "mcp-elicit-result", phKey, alice, phID, id))
	var out struct {
		Receipt string `json:"receipt"`
	}
	if err := json.Unmarshal(r.StructuredContent, &out); err != nil || out.Receipt == "" {
		t.Fatalf("elicit_result carries no receipt (%v): %s", err, r.StructuredContent)
	}

	set, err := receipt.FetchKeys(context.Background(), nil, gw.URL+signing.JWKSPath)
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Keys) != 1 || set.Keys[0].KeyID != "es256-k0" {
		t.Errorf("the review function's key set: %+v, want the one key derived from the token secret's k0", set.Keys)
	}
	// The issuer is the API's own address, as review URLs are built.
	const iss = "https://a1b2c3d4e5.execute-api.us-east-1.amazonaws.com"
	c, err := receipt.Verify(out.Receipt, set, receipt.Expect{Issuer: iss, Txn: id, Outcome: receipt.OutcomeApproved})
	if err != nil {
		t.Fatalf("the MCP function's receipt against the review function's key set: %v", err)
	}
	d, _ := c.Detail()
	if c.Requester != "alice" || len(c.Approvers) != 1 || !c.Approvers[0].Anonymous || c.Approvers[0].Via != "page" ||
		d.Message != "Deploy billing-api v2.4.1 to production?" || d.ContextSHA256 == "" || d.FormSHA256 == "" || c.AuditHead == "" {
		t.Errorf("receipt %+v %+v", c, d)
	}
}
