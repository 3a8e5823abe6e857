package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/reviewauth"
	"github.com/mcp-elicitation/elicitation/internal/reviewauth/oidctest"
	"github.com/mcp-elicitation/elicitation/internal/testenv"
	"github.com/mcp-elicitation/elicitation/receipt"
)

// TestStandingApprovalLocal: the local server on the embedded store, with
// reviewer sign-in: bob approves a deploy call made through the TypeScript
// SDK (the agent internal/lambdatest's test drives on Lambda too) with
// "also approve calls like this" on the page; the agent's next like call
// is decided at once by the rule, and its receipt names bob, via rule, and
// the rule; a call differing in the constrained field is asked; bob
// revokes the rule on his inbox, and the next like call is asked.
func TestStandingApprovalLocal(t *testing.T) {
	node := testenv.Node(t)
	testenv.NodeModule(t, "@modelcontextprotocol/sdk/package.json")
	addr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
	p := oidctest.Start(t, "http://"+addr+reviewauth.CallbackPath)
	m := start(t, "--addr", addr, "--data-dir", t.TempDir(), "--token-keys", ringKey("k1"),
		"--oidc-issuer", p.Issuer, "--oidc-client-id", oidctest.ClientID, "--oidc-client-secret", oidctest.ClientSecret)

	cmd := exec.Command(node, filepath.Join(testenv.Root(t), "internal", "lambdatest", "testdata", "standing.mjs"), m.MCPURL, "unused")
	stderr := &testenv.SyncBuffer{}
	cmd.Stderr = stderr
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("node stderr:\n%s", stderr.String())
		}
	})
	lines := bufio.NewScanner(out)
	lines.Buffer(make([]byte, 1<<20), 1<<20)
	next := func() map[string]any {
		t.Helper()
		if !lines.Scan() {
			t.Fatalf("the TypeScript agent ended: %v", lines.Err())
		}
		var ev map[string]any
		if err := json.Unmarshal(lines.Bytes(), &ev); err != nil {
			t.Fatal(err)
		}
		return ev
	}
	if ev := next(); ev["event"] != "connected" {
		t.Fatalf("the TypeScript agent: %v", ev)
	}
	do := func(cmd map[string]any) map[string]any {
		t.Helper()
		b, _ := json.Marshal(cmd)
		_, _ = fmt.Fprintf(in, "%s\n", b)
		ev := next()
		res, ok := ev["result"].(map[string]any)
		if !ok {
			t.Fatalf("%v: %v", cmd, ev)
		}
		return res
	}
	call := func(env string) (id, reviewURL, status string) {
		t.Helper()
		c := do(map[string]any{"create": map[string]any{"tool": "deploy", "arguments": map[string]any{"env": env}, "argumentsDigest": "sha256:" + env}})
		id = c["elicitationId"].(string)
		return id, c["reviewUrl"].(string), do(map[string]any{"await": id})["status"].(string)
	}

	_, u, status := call("staging")
	if status != "pending" {
		t.Fatalf("the first call: %s", status)
	}
	bob := oidctest.Browser(t)
	resp, body, err := oidctest.SignIn(context.Background(), bob, u, "bob")
	if err != nil || resp.StatusCode != http.StatusOK || !strings.Contains(body, "Approve, and also approve calls like this for") {
		t.Fatalf("bob's page: %v %v", resp, err)
	}
	tok := tokenRE.FindStringSubmatch(body)
	resp, err = bob.PostForm(u, url.Values{"token": {tok[1]}, "decision": {"submitted"},
		"rule": {"1"}, "rule.for": {"15m0s"}, "rule.uses": {"5"}, "rule.field": {`["arguments","env"]`}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), "up to 5, for 15 minutes") {
		t.Fatalf("approve with a rule: %d\n%.1000s", resp.StatusCode, b)
	}

	id, _, status := call("staging")
	if status != "submitted" {
		t.Fatalf("the next like call: %s, want submitted at once", status)
	}
	res := do(map[string]any{"result": id})
	rule, _ := res["decidedRule"].(string)
	if res["decidedBy"] != "bob@example.com" || res["decidedVia"] != "rule" || rule == "" {
		t.Errorf("the result: %v", res)
	}
	c := verified(t, m, res["receipt"].(string), receipt.Expect{Txn: id, Outcome: receipt.OutcomeApproved})
	if a := c.Approvers; len(a) != 1 || a[0].Principal != "bob@example.com" || a[0].Via != "rule" || a[0].Rule != rule || a[0].Issuer != p.Issuer {
		t.Errorf("the receipt's approvers %+v, want bob via rule %s", a, rule)
	}
	if _, _, status := call("production"); status != "pending" {
		t.Errorf("a call to production: %s, want pending", status)
	}

	inbox := m.ReviewBase + "/review/"
	resp, err = bob.Get(inbox)
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	rm := regexp.MustCompile(`name="token" value="([^"]+)"><input type="hidden" name="revoke" value="` + regexp.QuoteMeta(rule) + `"`).FindSubmatch(b)
	if rm == nil {
		t.Fatalf("bob's inbox lacks the rule, or its form the token:\n%.3000s", b)
	}
	req, _ := http.NewRequest(http.MethodPost, inbox, strings.NewReader(url.Values{"token": {string(rm[1])}, "revoke": {rule}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", m.ReviewBase)
	if resp, err = bob.Do(req); err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Request.URL.Path != "/review/" {
		t.Fatalf("revoke: %d at %s", resp.StatusCode, resp.Request.URL)
	}
	if _, _, status := call("staging"); status != "pending" {
		t.Errorf("after the revoke: %s, want pending", status)
	}
	_, _ = fmt.Fprintln(in, `{"done":true}`)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
	}
}
