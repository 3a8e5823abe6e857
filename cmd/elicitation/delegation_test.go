package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/boltstore"
	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/reviewauth"
	"github.com/mcp-elicitation/elicitation/internal/reviewauth/oidctest"
	"github.com/mcp-elicitation/elicitation/internal/testclock"
	"github.com/mcp-elicitation/elicitation/internal/testenv"
)

// TestDelegationWithSignIn: the local server with reviewer sign-in
// against the example OpenID provider. Alice, signed in, delegates to bob
// from her inbox for ten minutes; bob, signed in, finds the request that
// names only alice in his inbox and approves it: elicit_result names bob
// and the audit's decided entry says it was for alice. Eleven minutes on
// (the server's clock), bob's inbox no longer lists the other request
// naming alice and its page is the 404 of anyone who may not decide it.
func TestDelegationWithSignIn(t *testing.T) {
	addr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
	p := oidctest.Start(t, "http://"+addr+reviewauth.CallbackPath)
	clock := testclock.New(time.Now().UTC())
	cfg, err := parseServe([]string{"--addr", addr, "--data-dir", t.TempDir(), "--log-level", "warn",
		"--oidc-issuer", p.Issuer, "--oidc-client-id", oidctest.ClientID, "--oidc-client-secret", oidctest.ClientSecret}, io.Discard, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	m, err := Start(context.Background(), cfg, io.Discard, WithClock(clock.Now))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	s := agent(t, m.MCPURL)
	ask := func(msg string) string {
		return call(t, s, "elicit_approval", map[string]any{"message": msg, "context": 1, "timeoutSeconds": 3600, "reviewers": []string{"alice@example.com"}})["elicitationId"].(string)
	}
	first, second := ask("Deploy while alice is away?"), ask("And this one?")
	inbox := "http://" + addr + "/review/"
	get := func(c *http.Client, u string) (int, string) {
		t.Helper()
		r, err := c.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(r.Body)
		_ = r.Body.Close()
		return r.StatusCode, string(b)
	}

	// The out-of-office form's page token, from the inbox it is on.
	delegateToken := func(inbox string) string {
		m := regexp.MustCompile(`class="delegate">\n<input type="hidden" name="token" value="([^"]+)"`).FindStringSubmatch(inbox)
		if m == nil {
			t.Fatalf("the inbox's out-of-office form has no token:\n%.1500s", inbox)
		}
		return m[1]
	}
	alice := oidctest.Browser(t)
	resp, alicesInbox, err := oidctest.SignIn(context.Background(), alice, inbox, "alice")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("alice signs in: %v %v", resp, err)
	}
	end := clock.Now().Add(10 * time.Minute).Format("2006-01-02T15:04:05")
	resp, err = alice.PostForm(inbox, url.Values{"token": {delegateToken(alicesInbox)}, "delegate": {"1"}, "to": {"bob@example.com"}, "end": {end}})
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "<strong>bob@example.com</strong> decides for you until") {
		t.Fatalf("alice delegates: %d\n%.1500s", resp.StatusCode, body)
	}
	// Delegating to herself is refused, and writes nothing.
	if r, err := alice.PostForm(inbox, url.Values{"token": {delegateToken(string(body))}, "delegate": {"1"}, "to": {"alice@example.com"}, "end": {end}}); err != nil || r.StatusCode != http.StatusBadRequest {
		t.Errorf("alice delegates to herself: %v %v", r, err)
	} else {
		_ = r.Body.Close()
	}

	bob := oidctest.Browser(t)
	resp, bobsInbox, err := oidctest.SignIn(context.Background(), bob, inbox, "bob")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("bob signs in: %v %v", resp, err)
	}
	for _, id := range []string{first, second} {
		if !strings.Contains(bobsInbox, `href="./`+id+`"`) {
			t.Fatalf("bob's inbox lacks %s:\n%.2000s", id, bobsInbox)
		}
	}
	status, page := get(bob, inbox+first)
	tok := regexp.MustCompile(`name="token" value="([^"]+)"`).FindStringSubmatch(page)
	if status != http.StatusOK || tok == nil {
		t.Fatalf("bob opens the first: %d", status)
	}
	resp, err = bob.PostForm(inbox+first, url.Values{"token": {tok[1]}, "decision": {"submitted"}})
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("bob approves for alice: %d", resp.StatusCode)
	}
	res := call(t, s, "elicit_result", map[string]any{"elicitationId": first})
	if res["decidedBy"] != "bob@example.com" {
		t.Errorf("decidedBy %v, want bob@example.com", res["decidedBy"])
	}
	st := call(t, s, "elicit_status", map[string]any{"elicitationId": first, "includeAudit": true})
	raw, _ := json.Marshal(st["audit"])
	if !strings.Contains(string(raw), `"action":"decided"`) || !strings.Contains(string(raw), `"detail":"submitted, for alice@example.com"`) || !strings.Contains(string(raw), `"principal":"bob@example.com"`) {
		t.Errorf("the audit does not say bob decided for alice: %s", raw)
	}

	clock.Add(11 * time.Minute) // past the window's end
	if _, b := get(bob, inbox); strings.Contains(b, `href="./`+second+`"`) {
		t.Error("after the window bob's inbox still lists what names alice")
	}
	if status, _ := get(bob, inbox+second); status != http.StatusNotFound {
		t.Errorf("after the window bob opens what names alice: %d", status)
	}
}

// TestDelegationsCommand: the operator's listing, as JSON, of the
// delegations that have not ended (--all: those that have, too).
func TestDelegationsCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st, err := boltstore.Open(filepath.Join(dir, "elicitation.db"))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	for _, d := range []elicitation.Delegation{
		{ID: "current", From: "alice@example.com", To: "bob@example.com", Start: now.Add(-time.Hour), End: now.Add(time.Hour), CreatedAt: now.Add(-time.Hour)},
		{ID: "ended", From: "carol@example.com", To: "bob@example.com", Start: now.Add(-3 * time.Hour), End: now.Add(-2 * time.Hour), CreatedAt: now.Add(-3 * time.Hour)},
	} {
		if err := st.PutDelegation(context.Background(), d); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "current"},
		{[]string{"--all"}, "ended current"},
	} {
		var out bytes.Buffer
		if err := run(context.Background(), append([]string{"delegations", "--data-dir", dir}, tc.args...), &out, io.Discard, noEnv); err != nil {
			t.Fatal(err)
		}
		var got struct {
			Delegations []struct {
				ID, From, To string
				Active       bool
			}
		}
		if err := json.Unmarshal(out.Bytes(), &got); err != nil {
			t.Fatalf("%v\n%s", err, out.String())
		}
		var ids []string
		for _, d := range got.Delegations {
			ids = append(ids, d.ID)
			if d.Active != (d.ID == "current") || d.To != "bob@example.com" {
				t.Errorf("%+v", d)
			}
		}
		if strings.Join(ids, " ") != tc.want {
			t.Errorf("%v: %v, want %s", tc.args, ids, tc.want)
		}
	}
	if err := run(context.Background(), []string{"delegations", "--data-dir", dir, "extra"}, io.Discard, io.Discard, noEnv); err == nil {
		t.Error("an operand is accepted")
	}
}
