package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/mcptools/pushtest"
	"github.com/mcp-elicitation/elicitation/internal/reviewauth"
	"github.com/mcp-elicitation/elicitation/internal/reviewauth/oidctest"
	"github.com/mcp-elicitation/elicitation/internal/signing"
	"github.com/mcp-elicitation/elicitation/internal/testenv"
	"github.com/mcp-elicitation/elicitation/receipt"
)

func ringKey(id string) string {
	return id + ":" + base64.StdEncoding.EncodeToString([]byte(strings.Repeat(id, 32)))
}

// verified fetches the key set m publishes and verifies tok with it.
func verified(t *testing.T, m *Main, tok string, expect receipt.Expect) receipt.Claims {
	t.Helper()
	set, err := receipt.FetchKeys(context.Background(), nil, m.ReviewBase+signing.JWKSPath)
	if err != nil {
		t.Fatal(err)
	}
	expect.Issuer = m.ReviewBase
	c, err := receipt.Verify(tok, set, expect)
	if err != nil {
		t.Fatalf("the receipt does not verify: %v", err)
	}
	return c
}

// appHost is an MCP client that declares the MCP Apps extension.
func appHost(t *testing.T, mcpURL string) *mcp.ClientSession {
	t.Helper()
	caps := &mcp.ClientCapabilities{Extensions: map[string]any{"io.modelcontextprotocol/ui": map[string]any{"mimeTypes": []string{"text/html;profile=mcp-app"}}}}
	c := mcp.NewClient(&mcp.Implementation{Name: "app-host", Version: "1"}, &mcp.ClientOptions{Capabilities: caps})
	s, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: mcpURL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// The local server without sign-in: a page decision and an App decision
// each come back with a receipt that the key set published on the review
// listener verifies (anonymous approver, the channel, the digest of the
// context as any RFC 8785 implementation computes it); after a restart
// with a rotated keyring the old receipt still verifies and new ones are
// signed by the new key; the npm jose library agrees, typ checked, and
// refuses an altered receipt.
func TestReceiptsWithoutSignIn(t *testing.T) {
	// One address across the restart: one deployment, one issuer.
	addr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
	cfg, err := parseServe([]string{"--addr", addr, "--log-level", "warn", "--data-dir", t.TempDir(), "--mcp-app", "--token-keys", ringKey("k1")}, io.Discard, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	m1, err := Start(context.Background(), cfg, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	s := appHost(t, m1.MCPURL)

	created := call(t, s, "elicit_approval", map[string]any{"message": "Ship build 7?", "context": map[string]any{"build": 7, "env": "prod"}})
	id := created["elicitationId"].(string)
	pushtest.Decide(t, created["reviewUrl"].(string), "submitted")
	res := call(t, s, "elicit_result", map[string]any{"elicitationId": id})
	page, _ := res["receipt"].(string)
	c := verified(t, m1, page, receipt.Expect{Txn: id, Outcome: receipt.OutcomeApproved})
	d, _ := c.Detail()
	ctxDigest, _ := receipt.Digest(json.RawMessage(`{"env":"prod","build":7.0}`))
	if c.Requester != "anonymous" || c.Quorum != 1 || len(c.Approvers) != 1 || !c.Approvers[0].Anonymous || c.Approvers[0].Principal != "" ||
		c.Approvers[0].Via != "page" || d.Message != "Ship build 7?" || d.ContextSHA256 != ctxDigest || d.FormSHA256 != "" {
		t.Errorf("page receipt %+v %+v", c, d)
	}
	// The receipt carries the audit chain's head at the decision: the
	// trail verifies, up to that head.
	tr, err := m1.Service.Audit(context.Background(), "anonymous", id)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := elicitation.VerifyAudit(id, tr.Entries); err != nil || c.AuditHead == "" || c.AuditHead != elicitation.OutcomeHead(tr.Entries).String() {
		t.Errorf("receipt audit_head %q, the trail's outcome head %q (%v)", c.AuditHead, elicitation.OutcomeHead(tr.Entries), err)
	}

	sel := call(t, s, "elicit_selection", map[string]any{"message": "Which?", "options": []map[string]any{{"id": "a"}, {"id": "b"}}})
	sid := sel["elicitationId"].(string)
	view := call(t, s, "elicit_app_view", map[string]any{"elicitationId": sid})
	call(t, s, "elicit_app_decide", map[string]any{"elicitationId": sid, "renderToken": view["renderToken"], "decision": "submitted", "selectedIds": []string{"b"}})
	app, _ := call(t, s, "elicit_result", map[string]any{"elicitationId": sid})["receipt"].(string)
	c = verified(t, m1, app, receipt.Expect{Txn: sid})
	if c.Outcome != receipt.OutcomeApproved || fmt.Sprint(c.SelectedIDs) != "[b]" || c.Approvers[0].Via != "app" || !c.Approvers[0].Anonymous {
		t.Errorf("app receipt %+v", c)
	}
	if set, _ := receipt.FetchKeys(context.Background(), nil, m1.ReviewBase+signing.JWKSPath); len(set.Keys) != 1 {
		t.Errorf("key set %+v", set)
	}
	_ = s.Close()
	if err := m1.Close(); err != nil {
		t.Fatal(err)
	}

	// A restart with a rotated keyring.
	cfg.TokenKeys = ringKey("k2") + "," + ringKey("k1")
	m2, err := Start(context.Background(), cfg, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m2.Close() })
	set, err := receipt.FetchKeys(context.Background(), nil, m2.ReviewBase+signing.JWKSPath)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := receipt.Verify(page, set, receipt.Expect{Issuer: m1.ReviewBase, Txn: id}); err != nil {
		t.Errorf("the previous key's receipt after the rotation: %v", err)
	}
	s2 := agent(t, m2.MCPURL)
	again := call(t, s2, "elicit_result", map[string]any{"elicitationId": id})["receipt"].(string)
	hdr, _ := base64.RawURLEncoding.DecodeString(strings.Split(again, ".")[0])
	if !strings.Contains(string(hdr), `"kid":"es256-k2"`) {
		t.Errorf("after the rotation a receipt's header is %s, want the new key es256-k2", hdr)
	}
	if _, err := receipt.Verify(again, set, receipt.Expect{Issuer: m2.ReviewBase, Txn: id}); err != nil {
		t.Errorf("the new key's receipt: %v", err)
	}

	// The npm jose library, typ checked: the receipts verify, the same
	// receipt with its outcome altered does not.
	node := testenv.Node(t)
	testenv.NodeModule(t, "jose/package.json")
	parts := strings.Split(page, ".")
	body, _ := base64.RawURLEncoding.DecodeString(parts[1])
	altered := parts[0] + "." + base64.RawURLEncoding.EncodeToString(bytes.Replace(body, []byte(`"approved"`), []byte(`"declined"`), 1)) + "." + parts[2]
	script := filepath.Join(testenv.Root(t), "cmd", "elicitation", "testdata", "receipt.mjs")
	out, err := exec.Command(node, script, m2.ReviewBase+signing.JWKSPath, m1.ReviewBase, page, app, altered).CombinedOutput()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, out)
	}
	var lines []string
	for sc := bufio.NewScanner(bytes.NewReader(out)); sc.Scan(); {
		lines = append(lines, sc.Text())
	}
	want := []string{
		fmt.Sprintf(`{"ok":true,"kid":"es256-k1","txn":%q,"outcome":"approved"}`, id),
		fmt.Sprintf(`{"ok":true,"kid":"es256-k1","txn":%q,"outcome":"approved"}`, sid),
		`{"ok":false,"code":"ERR_JWS_SIGNATURE_VERIFICATION_FAILED"}`,
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("jose:\n%s\nwant:\n%s", out, strings.Join(want, "\n"))
	}
	if _, err := receipt.Verify(altered, set, receipt.Expect{Issuer: m1.ReviewBase}); !errors.Is(err, receipt.ErrSignature) {
		t.Errorf("the altered receipt in Go: %v", err)
	}

	// elicitation receipt: the operator's check, against the key set the
	// issuer publishes.
	var printed bytes.Buffer
	if err := run(context.Background(), []string{"receipt", "--issuer", m2.ReviewBase, "--elicitation", sid, "--outcome", "approved", app}, &printed, io.Discard, noEnv); err != nil || !strings.Contains(printed.String(), `"selected_ids": [`) {
		t.Errorf("elicitation receipt: %v\n%s", err, printed.String())
	}
	jwks := m2.ReviewBase + signing.JWKSPath
	for name, args := range map[string][]string{
		"bad signature":       {"--issuer", m2.ReviewBase, altered},
		"another elicitation": {"--issuer", m2.ReviewBase, "--elicitation", id, app},
		"another issuer":      {"--issuer", "https://other.example", "--keys", jwks, app},
	} {
		err := run(context.Background(), append([]string{"receipt"}, args...), io.Discard, io.Discard, noEnv)
		if err == nil || !strings.HasPrefix(err.Error(), "receipt refused: ") {
			t.Errorf("elicitation receipt, %s: %v", name, err)
		}
	}
}

// decideSignedIn signs who in with browser and decides the request at u.
func decideSignedIn(t *testing.T, browser *http.Client, u, who, decision string) {
	t.Helper()
	resp, body, err := oidctest.SignIn(context.Background(), browser, u, who)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("%s's page: %v %v", who, resp, err)
	}
	tok := tokenRE.FindStringSubmatch(body)
	resp, err = browser.PostForm(u, url.Values{"token": {tok[1]}, "decision": {decision}})
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s's decision: %d", who, resp.StatusCode)
	}
}

// With reviewer sign-in, the receipt names the reviewer as decidedBy does
// and the issuer that signed them in; a decline is attested too, and a
// quorum of two names both approvers in order.
func TestReceiptWithSignIn(t *testing.T) {
	addr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
	p := oidctest.Start(t, "http://"+addr+reviewauth.CallbackPath)
	m := start(t, "--addr", addr, "--data-dir", t.TempDir(),
		"--oidc-issuer", p.Issuer, "--oidc-client-id", oidctest.ClientID, "--oidc-client-secret", oidctest.ClientSecret)
	s := agent(t, m.MCPURL)
	bob, alice := oidctest.Browser(t), oidctest.Browser(t)
	c := call(t, s, "elicit_approval", map[string]any{"message": "Ship?", "context": 1, "reviewers": []string{"alice@example.com", "bob@example.com"}, "approvals": 2})
	id, u := c["elicitationId"].(string), c["reviewUrl"].(string)
	decideSignedIn(t, alice, u, "alice", "submitted")
	decideSignedIn(t, bob, u, "bob", "submitted")
	r := verified(t, m, call(t, s, "elicit_result", map[string]any{"elicitationId": id})["receipt"].(string), receipt.Expect{Txn: id, Outcome: receipt.OutcomeApproved})
	if a := r.Approvers; r.Quorum != 2 || len(a) != 2 || a[0].Principal != "alice@example.com" || a[1].Principal != "bob@example.com" || a[0].Issuer != p.Issuer || a[1].Issuer != p.Issuer || a[0].At > a[1].At {
		t.Errorf("quorum receipt %+v", r)
	}
	for _, decision := range []string{"submitted", "declined"} {
		c := call(t, s, "elicit_approval", map[string]any{"message": "Ship?", "context": 1, "reviewers": []string{"bob@example.com"}})
		id, u := c["elicitationId"].(string), c["reviewUrl"].(string)
		decideSignedIn(t, bob, u, "bob", decision)
		res := call(t, s, "elicit_result", map[string]any{"elicitationId": id})
		r := verified(t, m, res["receipt"].(string), receipt.Expect{Txn: id})
		want := map[string]string{"submitted": receipt.OutcomeApproved, "declined": receipt.OutcomeDeclined}[decision]
		a := r.Approvers
		if r.Outcome != want || len(a) != 1 || a[0].Anonymous || a[0].Principal != "bob@example.com" || a[0].Principal != res["decidedBy"] ||
			a[0].Issuer != p.Issuer || a[0].Via != "page" || a[0].Decision != want {
			t.Errorf("%s: receipt %+v", decision, r)
		}
	}
}

// A decision in the host's own form (--host-form, askInHost) comes back
// with a receipt naming that channel: no sign-in, so no approver identity,
// and the digest of exactly the form the host submitted.
func TestReceiptFromHostForm(t *testing.T) {
	t.Parallel()
	m := start(t, "--data-dir", t.TempDir(), "--host-form")
	answer := map[string]any{"ticket": "OPS-7"}
	c := mcp.NewClient(&mcp.Implementation{Name: "form-host", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: answer}, nil
		}})
	s, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: m.MCPURL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	form := map[string]any{"type": "object", "properties": map[string]any{"ticket": map[string]any{"type": "string"}}, "required": []string{"ticket"}}
	id := call(t, s, "elicit_approval", map[string]any{"message": "Open the change?", "requestedSchema": form, "askInHost": true})["elicitationId"].(string)
	if got := call(t, s, "elicit_await", map[string]any{"elicitationId": id}); got["status"] != "submitted" {
		t.Fatalf("elicit_await after the host's form: %v", got)
	}
	res := call(t, s, "elicit_result", map[string]any{"elicitationId": id})
	r := verified(t, m, res["receipt"].(string), receipt.Expect{Txn: id, Outcome: receipt.OutcomeApproved})
	d, ok := r.Detail()
	want, err := receipt.Digest(json.RawMessage(`{"ticket":"OPS-7"}`))
	if err != nil {
		t.Fatal(err)
	}
	if a := r.Approvers; len(a) != 1 || a[0].Via != "host-form" || !a[0].Anonymous || a[0].Principal != "" || !ok || d.FormSHA256 != want {
		t.Errorf("receipt of a host-form decision: approvers %+v, detail %+v (want form digest %s)", a, d, want)
	}
}
