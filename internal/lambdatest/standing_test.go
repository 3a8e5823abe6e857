//go:build unix

package lambdatest_test

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
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/lambdatest"
	"github.com/mcp-elicitation/elicitation/internal/reviewauth"
	"github.com/mcp-elicitation/elicitation/internal/reviewauth/oidctest"
	"github.com/mcp-elicitation/elicitation/internal/testenv"
)

// tsAgent is testdata/standing.mjs: an agent on the TypeScript MCP SDK that
// answers one JSON command per line.
type tsAgent struct {
	t     *testing.T
	in    io.Writer
	lines *bufio.Scanner
}

func startTSAgent(t *testing.T, endpoint, key string) *tsAgent {
	t.Helper()
	node := testenv.Node(t)
	testenv.NodeModule(t, "@modelcontextprotocol/sdk/package.json")
	cmd := exec.Command(node, filepath.Join(testenv.Root(t), "internal", "lambdatest", "testdata", "standing.mjs"), endpoint, key)
	stderr := &testenv.SyncBuffer{}
	cmd.Stderr = stderr
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = in.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("the TypeScript agent's stderr:\n%s", stderr.String())
		}
	})
	a := &tsAgent{t: t, in: in, lines: bufio.NewScanner(out)}
	a.lines.Buffer(make([]byte, 1<<20), 1<<20)
	if ev := a.next(); ev["event"] != "connected" {
		t.Fatalf("the TypeScript agent: %v", ev)
	}
	return a
}

func (a *tsAgent) next() map[string]any {
	a.t.Helper()
	if !a.lines.Scan() {
		a.t.Fatalf("the TypeScript agent ended: %v", a.lines.Err())
	}
	var ev map[string]any
	if err := json.Unmarshal(a.lines.Bytes(), &ev); err != nil {
		a.t.Fatalf("the TypeScript agent said %q: %v", a.lines.Text(), err)
	}
	return ev
}

// do sends one command and returns its result's structured content.
func (a *tsAgent) do(cmd map[string]any) map[string]any {
	a.t.Helper()
	b, _ := json.Marshal(cmd)
	if _, err := fmt.Fprintf(a.in, "%s\n", b); err != nil {
		a.t.Fatal(err)
	}
	ev := a.next()
	res, ok := ev["result"].(map[string]any)
	if !ok {
		a.t.Fatalf("%v: %v", cmd, ev)
	}
	return res
}

// call makes a deploy call to env through the agent, and returns its id
// and its status after one short await.
func (a *tsAgent) call(env string) (id, status string) {
	a.t.Helper()
	c := a.do(map[string]any{"create": map[string]any{"tool": "deploy", "arguments": map[string]any{"env": env, "replicas": 2}, "argumentsDigest": "sha256:" + env}})
	if c["status"] != "pending" {
		a.t.Errorf("the creation says %v, want pending as always", c["status"])
	}
	id = c["elicitationId"].(string)
	return id, a.do(map[string]any{"await": id})["status"].(string)
}

// TestStandingApprovalOnLambda: on the Lambda functions (DynamoDB Local
// through the IAM enforcer with template.yaml's policies), bob signs in,
// approves an agent's deploy call with "also approve calls like this",
// and the agent's next like call, made through the TypeScript SDK, is
// decided at once by bob's rule (decidedVia rule, the rule's id); a call to another env is asked of a human; bob revokes the
// rule in his inbox (the submit function, another process than the MCP
// function that read the rule a moment before), and the next like call is
// asked of a human.
func TestStandingApprovalOnLambda(t *testing.T) {
	testenv.Slow(t, "Lambda emulator")
	t.Parallel()
	// The stack is made after the gateway (its URL is the stack's), and the
	// TypeScript agent's requests reach the gateway from another process,
	// which orders nothing for the race detector: hand it over atomically.
	var built atomic.Pointer[stack]
	gw := lambdatest.Gateway(t, func(method, path string) (string, *lambdatest.Function) {
		s := built.Load()
		if s == nil {
			return "", nil
		}
		if path == "/mcp" {
			return "ANY /mcp", s.fn["mcp"]
		}
		rest, ok := strings.CutPrefix(path, "/review")
		segs := strings.FieldsFunc(rest, func(r rune) bool { return r == '/' })
		if !ok || rest != "" && rest[0] != '/' || len(segs) > 2 {
			return "", nil
		}
		route := []string{"/review", "/review/{id}", "/review/{id}/{key}"}[len(segs)]
		switch method {
		case http.MethodGet:
			return "GET " + route, s.fn["review"]
		case http.MethodPost:
			return "POST " + route, s.fn["submit"]
		}
		return "", nil
	})
	p := oidctest.Start(t, gw.URL+reviewauth.CallbackPath)
	s := newStack(t, stackOptions{
		allEnv: []string{
			"ELICITATION_PUBLIC_URL=" + gw.URL, "ELICITATION_OIDC_ISSUER=" + p.Issuer, "ELICITATION_OIDC_CLIENT_ID=" + oidctest.ClientID,
			"ELICITATION_OIDC_CLIENT_SECRET_ARN=" + oidcSecretARN,
		},
		secrets: map[string]string{oidcSecretARN: oidctest.ClientSecret},
	})
	built.Store(s)
	agent := startTSAgent(t, gw.URL+"/mcp", s.keys["alice"])
	first, status := agent.call("staging")
	if status != "pending" {
		t.Fatalf("the first call is %s, want pending", status)
	}

	bob := oidctest.Browser(t)
	if _, _, err := oidctest.SignIn(context.Background(), bob, gw.URL+"/review", "bob"); err != nil {
		t.Fatal(err)
	}
	send := func(path string, form url.Values) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, gw.URL+path, strings.NewReader(form.Encode()))
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
	resp, err := bob.Get(gw.URL + "/review/" + first)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	m := regexp.MustCompile(`name="token" value="([^"]+)"`).FindStringSubmatch(string(b))
	if resp.StatusCode != http.StatusOK || m == nil || !strings.Contains(string(b), "Approve, and also approve calls like this for") {
		t.Fatalf("bob's page of the first call: %d\n%.1500s", resp.StatusCode, b)
	}
	code, body := send("/review/"+first, url.Values{"token": {strings.ReplaceAll(m[1], "&#43;", "+")}, "decision": {"submitted"},
		"rule": {"1"}, "rule.for": {"1h0m0s"}, "rule.uses": {"3"}, "rule.field": {`["arguments","env"]`}})
	if code != http.StatusOK || !strings.Contains(body, "Later requests like this one are approved for you too: up to 3") {
		t.Fatalf("approve with a rule: %d\n%.1500s", code, body)
	}

	// The next like call: decided at once, in bob's name, by the rule.
	next, status := agent.call("staging")
	if status != "submitted" {
		t.Fatalf("the next like call is %s, want submitted at once", status)
	}
	res := agent.do(map[string]any{"result": next})
	rule, _ := res["decidedRule"].(string)
	if res["decision"] != "submitted" || res["decidedBy"] != "bob@example.com" || res["decidedVia"] != "rule" || rule == "" {
		t.Errorf("the next call's result: %v", res)
	}
	// One constrained field different: asked of a human.
	if _, status := agent.call("production"); status != "pending" {
		t.Errorf("a call to production is %s, want pending", status)
	}
	// The inbox lists the rule; bob revokes it there (the submit function).
	inbox, err := bob.Get(gw.URL + "/review/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(inbox.Body)
	_ = inbox.Body.Close()
	if !strings.Contains(string(b), `name="revoke" value="`+rule+`"`) || !strings.Contains(string(b), "1 of 3 used") {
		t.Fatalf("bob's inbox does not list the rule:\n%.3000s", b)
	}
	rm := regexp.MustCompile(`name="token" value="([^"]+)"><input type="hidden" name="revoke" value="` + regexp.QuoteMeta(rule) + `"`).FindSubmatch(b)
	if rm == nil {
		t.Fatalf("the rule's Revoke form has no token:\n%.3000s", b)
	}
	if code, body := send("/review/", url.Values{"token": {string(rm[1])}, "revoke": {rule}}); code != http.StatusOK || !strings.Contains(body, "revoked") {
		t.Fatalf("revoke: %d\n%.1500s", code, body)
	}
	if _, status := agent.call("staging"); status != "pending" {
		t.Errorf("after the revoke a like call is %s, want pending", status)
	}
}
