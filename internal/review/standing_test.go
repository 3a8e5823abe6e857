package review_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/testenv"
)

// gateInput is an approval as the proxy's gate asks it: deploy to env.
func gateInput(env string) elicitation.Input {
	return elicitation.Input{Message: "Allow the tool deploy to run with these arguments?", TimeoutSeconds: 3600,
		Context: json.RawMessage(`{"tool":"deploy","arguments":{"env":"` + env + `","replicas":2},"argumentsDigest":"sha256:` + env + `"}`)}
}

// pageToken renders c's page for name and returns its page token.
func (e *env) pageToken(name string, c created) (string, response) {
	e.t.Helper()
	r := e.getAs(name, "/review/"+c.ID)
	m := tokenRE.FindStringSubmatch(r.Body)
	if r.Status != http.StatusOK || m == nil {
		e.t.Fatalf("GET as %s: %d, no token", name, r.Status)
	}
	return htmlUnescape(m[1]), r
}

var ruleIDRE = regexp.MustCompile(`name="revoke" value="([^"]+)"`)

func ruleForm(tok, uses string, fields ...string) url.Values {
	f := url.Values{"token": {tok}, "decision": {"submitted"}, "rule": {"1"}, "rule.for": {"1h0m0s"}, "rule.uses": {uses}}
	for _, p := range fields {
		f.Add("rule.field", p)
	}
	return f
}

// TestStandingApprovalPage: the decision form offers a standing approval
// to a signed-in reviewer; one made there decides the next like request at
// its creation, is listed in the inbox and revoked there (after which the
// next is asked again); bad input decides nothing; a revoke from another
// site or by another reviewer changes nothing.
func TestStandingApprovalPage(t *testing.T) {
	e := newSignedInEnv(t)
	first := e.create("agent", gateInput("staging"))
	tok, page := e.pageToken("bob", first)
	for _, want := range []string{"Approve, and also approve calls like this for…", `name="rule.field" value="[&#34;arguments&#34;,&#34;env&#34;]" checked`, "calls of <code>deploy</code>"} {
		if !strings.Contains(page.Body, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	compareGolden(t, "approval-standing", normalize(page.Body, first))

	// Bad input: nothing decided, the page again with what to fix.
	r := e.postAs("bob", "/review/"+first.ID, ruleForm(tok, "0", `["arguments","env"]`))
	if r.Status != http.StatusUnprocessableEntity || !strings.Contains(r.Body, "1 to 1000 uses, not 0") || !strings.Contains(r.Body, `id="rule-on" name="rule" value="1" checked`) {
		t.Errorf("uses 0: %d, want 422 saying so with the rule still ticked", r.Status)
	}
	if st := e.state(first); st.Status != elicitation.StatusPending {
		t.Fatalf("after bad input the request is %s", st.Status)
	}

	tok, _ = e.pageToken("bob", first)
	r = e.postAs("bob", "/review/"+first.ID, ruleForm(tok, "5", `["arguments","env"]`, `["arguments","replicas"]`))
	if r.Status != http.StatusOK || !strings.Contains(r.Body, "Later requests like this one are approved for you too: up to 5, for 1 hour.") {
		t.Fatalf("approve with a rule: %d %s", r.Status, r.Body)
	}
	next := e.create("agent", gateInput("staging"))
	if st := e.state(next); st.Status != elicitation.StatusSubmitted || st.DecidedVia != elicitation.ViaRule || st.DecidedBy != "bob@example.com" {
		t.Errorf("the next like call: %+v, want decided by bob's rule", st)
	}
	if st := e.state(e.create("agent", gateInput("production"))); st.Status != elicitation.StatusPending {
		t.Errorf("a call to production: %s, want pending", st.Status)
	}

	inbox := e.getAs("bob", "/review/")
	m := ruleIDRE.FindStringSubmatch(inbox.Body)
	if m == nil || !strings.Contains(inbox.Body, "Your standing approvals") || !strings.Contains(inbox.Body, "1 of 5 used") {
		t.Fatalf("bob's inbox does not list the rule with one use: %s", inbox.Body)
	}
	ruleID := m[1]
	section := inbox.Body[strings.Index(inbox.Body, `<section class="rules"`):]
	compareGolden(t, "inbox-standing", tokenValueRE.ReplaceAllString(strings.ReplaceAll(section, ruleID, "RULE-ID"), "PAGE-TOKEN"))
	if strings.Contains(e.getAs("carol", "/review/").Body, ruleID) {
		t.Error("carol's inbox lists bob's rule")
	}

	// Another site, another reviewer: nothing revoked.
	req, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/review/", strings.NewReader(url.Values{"revoke": {ruleID}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", "https://evil.example")
	res, err := e.as("bob").Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if res.Body.Close(); res.StatusCode != http.StatusForbidden {
		t.Errorf("a cross-origin revoke: %d, want 403", res.StatusCode)
	}
	// Carol's inbox has no Revoke form for bob's rule: bob's form sent from
	// her session is refused (its token is his).
	bobsRevoke := e.withInboxToken("bob", url.Values{"revoke": {ruleID}})
	if r := e.postAs("carol", "/review/", bobsRevoke); r.Status != http.StatusForbidden {
		t.Errorf("carol revoking bob's rule: %d, want 403", r.Status)
	}
	if st := e.state(e.create("agent", gateInput("staging"))); st.Status != elicitation.StatusSubmitted {
		t.Errorf("after refused revokes: %s, want still decided by the rule", st.Status)
	}

	// Bob revokes: back to the inbox, and the next call is asked again.
	noRedirect := e.as("bob")
	noRedirect.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	req, _ = http.NewRequest(http.MethodPost, e.srv.URL+"/review/", strings.NewReader(bobsRevoke.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", e.srv.URL)
	if res, err = noRedirect.Do(req); err != nil {
		t.Fatal(err)
	}
	if res.Body.Close(); res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "./" {
		t.Errorf("revoke: %d to %q, want 303 to ./", res.StatusCode, res.Header.Get("Location"))
	}
	if st := e.state(e.create("agent", gateInput("staging"))); st.Status != elicitation.StatusPending {
		t.Errorf("after the revoke: %s, want pending", st.Status)
	}
	if inbox := e.getAs("bob", "/review/"); !strings.Contains(inbox.Body, "revoked") || strings.Contains(inbox.Body, `name="revoke"`) {
		t.Error("the inbox does not show the rule revoked, without a Revoke button")
	}
}

// TestStandingSelectionPage: a selection's page offers to pick the same
// options in later requests like it; the rule made with a pick answers the
// next selection from the same agent that offers them, at its creation,
// and not one that lacks them or comes from another agent.
func TestStandingSelectionPage(t *testing.T) {
	e := newSignedInEnv(t)
	pick := func(owner string, ids ...string) created {
		var opts []json.RawMessage
		for _, id := range ids {
			opts = append(opts, json.RawMessage(`{"id":"`+id+`","label":"Region `+id+`"}`))
		}
		c, err := e.svc.Create(context.Background(), owner, elicitation.KindSelection, elicitation.Input{Message: "Which region?", Options: opts, TimeoutSeconds: 3600})
		if err != nil {
			t.Fatal(err)
		}
		return created{c.State.ID, c.ReviewKey}
	}
	first := pick("agent", "eu", "us")
	tok, page := e.pageToken("bob", first)
	if want := "Send this choice, and also pick it for requests like this for…"; !strings.Contains(page.Body, want) {
		t.Errorf("the selection's page lacks %q", want)
	}
	f := ruleForm(tok, "3")
	f.Set("option", "eu")
	if r := e.postAs("bob", "/review/"+first.ID, f); r.Status != http.StatusOK {
		t.Fatalf("pick with a rule: %d %s", r.Status, r.Body)
	}
	next := pick("agent", "us", "eu", "ap")
	if st := e.state(next); st.Status != elicitation.StatusSubmitted || st.DecidedVia != elicitation.ViaRule || st.DecidedBy != "bob@example.com" {
		t.Fatalf("the next like selection: %+v, want answered by bob's rule", st)
	}
	if res, err := e.svc.Result(context.Background(), "agent", next.ID); err != nil || strings.Join(res.SelectedIDs, ",") != "eu" {
		t.Errorf("the rule's answer: %v, %v; want eu", res.SelectedIDs, err)
	}
	for name, owner := range map[string]string{"without eu": "agent", "from another agent": "other-agent"} {
		ids := []string{"eu", "us"}
		if owner == "agent" {
			ids = []string{"us", "ap"}
		}
		c := pick(owner, ids...)
		if st, err := e.svc.Status(context.Background(), owner, c.ID); err != nil || st.Status != elicitation.StatusPending {
			t.Errorf("a selection %s: %s, %v; want pending", name, st.Status, err)
		}
	}
}

// TestStandingApprovalNotOffered: no offer without sign-in, on a form to
// fill, or on a quorum.
func TestStandingApprovalNotOffered(t *testing.T) {
	e := newSignedInEnv(t)
	q := gateInput("staging")
	q.Reviewers, q.Approvals = []string{"bob@example.com", "carol@example.com"}, 2
	form := gateInput("staging")
	form.Context, form.RequestedSchema = nil, formSchema
	for name, in := range map[string]elicitation.Input{"quorum": q, "form": form} {
		c, err := e.svc.Create(context.Background(), "agent", elicitation.KindApproval, in)
		if err != nil {
			t.Fatal(err)
		}
		if _, page := e.pageToken("bob", created{c.State.ID, c.ReviewKey}); strings.Contains(page.Body, `name="rule"`) {
			t.Errorf("%s: the page offers a standing approval", name)
		}
	}
	plain := newEnv(t)
	c := plain.approval(gateInput("staging"))
	if r := plain.get(c.Path()); strings.Contains(r.Body, `name="rule"`) {
		t.Error("without sign-in the page offers a standing approval")
	}
}

// TestStandingApprovalChromium: the standing approval's controls on a
// phone in both schemes, and the inbox's list with its Revoke button, in
// headless Chromium with axe-core (browsertest's standing flow).
func TestStandingApprovalChromium(t *testing.T) {
	testenv.Slow(t, "Chromium")
	t.Parallel()
	e := newSignedInEnv(t)
	var flows []flow
	for i, v := range []struct{ viewport, scheme string }{{"p390", "light"}, {"p320", "dark"}} {
		c := e.create("agent", gateInput(fmt.Sprint("env-", i)))
		flows = append(flows, flow{"name": "standing-" + v.viewport + "-" + v.scheme, "do": "standing", "viewport": v.viewport, "scheme": v.scheme, "as": []string{"bob", "carol"}[i], "url": "/review/" + c.ID, "uses": 3})
	}
	runBrowser(t, e, flows, t.TempDir())
}
