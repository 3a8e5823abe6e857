package review_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/pagetoken"
	"github.com/mcp-elicitation/elicitation/internal/review"
)

var (
	revokeTokRE   = regexp.MustCompile(`name="token" value="([^"]+)"><input type="hidden" name="revoke" value="([^"]+)"`)
	endTokRE      = regexp.MustCompile(`name="token" value="([^"]+)"><input type="hidden" name="end-delegation" value="([^"]+)"`)
	delegateTokRE = regexp.MustCompile(`class="delegate">\n<input type="hidden" name="token" value="([^"]+)"`)
)

// postBare posts form to the inbox as name from a browser that sends
// neither Origin nor Sec-Fetch-Site (as browsers before 2020), not
// following the redirect.
func (e *env) postBare(name string, form url.Values) response {
	e.t.Helper()
	c := e.as(name)
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	res, err := c.PostForm(e.srv.URL+"/review/", form)
	if err != nil {
		e.t.Fatal(err)
	}
	return read(e.t, res)
}

// TestInboxFormTokens: the inbox's forms that change something (revoking
// a standing approval, making and ending a delegation) carry a page token
// bound to the form, what it acts on and the reviewer. From a browser
// that sends neither Origin nor Sec-Fetch-Site, which the origin check
// lets through, a post without a token, with another reviewer's, one for
// another form or target, or an expired one is refused (403) and changes
// nothing; the token the inbox gave does.
func TestInboxFormTokens(t *testing.T) {
	e := newSignedInEnv(t)
	ctx := context.Background()
	first := e.create("agent", gateInput("staging"))
	tok, _ := e.pageToken("bob", first)
	if r := e.postAs("bob", "/review/"+first.ID, ruleForm(tok, "5", `["arguments","env"]`)); r.Status != http.StatusOK {
		t.Fatalf("bob's standing approval: %d", r.Status)
	}
	end := e.clock.Now().Add(2 * time.Hour)
	d, err := e.svc.Delegate(ctx, reviewers["bob"], elicitation.DelegationInput{To: "eve@example.com", End: end})
	if err != nil {
		t.Fatal(err)
	}
	inbox := e.getAs("bob", "/review/").Body
	rv, en, dl := revokeTokRE.FindStringSubmatch(inbox), endTokRE.FindStringSubmatch(inbox), delegateTokRE.FindStringSubmatch(inbox)
	if rv == nil || en == nil || dl == nil || en[2] != d.ID {
		t.Fatalf("the inbox's forms carry no token: revoke %v, end %v, delegate %v", rv, en, dl)
	}
	ruleID := rv[2]
	mint := func(name, subject string, ttl time.Duration) string {
		tok, err := e.keys.Seal(pagetoken.Claims{ElicitationID: subject, RenderID: "minted", Expires: e.clock.Now().Add(ttl),
			Reviewer: review.TokenReviewer(elicitation.WithIdentity(ctx, reviewers[name]))})
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	forms := []struct {
		name, form, target string
		values             url.Values
		inbox              string
	}{
		{"revoke", "revoke", ruleID, url.Values{"revoke": {ruleID}}, rv[1]},
		{"end a delegation", "end-delegation", d.ID, url.Values{"end-delegation": {d.ID}}, en[1]},
		{"delegate", "delegate", "", url.Values{"delegate": {"1"}, "to": {"carol@example.com"}, "end": {end.Format("2006-01-02T15:04")}}, dl[1]},
	}
	for _, f := range forms {
		for name, token := range map[string][]string{
			"no token":           nil,
			"an empty token":     {""},
			"two tokens":         {htmlUnescape(f.inbox), htmlUnescape(f.inbox)},
			"another reviewer's": {mint("carol", review.FormSubject(f.form, f.target), time.Hour)},
			"another target's":   {mint("bob", review.FormSubject(f.form, f.target+"x"), time.Hour)},
			"another form's":     {mint("bob", review.FormSubject("batch", f.target), time.Hour)},
			"a request page's":   {tok},
			"an expired one":     {mint("bob", review.FormSubject(f.form, f.target), -time.Second)},
			"a forged one":       {htmlUnescape(f.inbox) + "x"},
		} {
			v := url.Values{}
			for k, vs := range f.values {
				v[k] = vs
			}
			v["token"] = token
			if r := e.postBare("bob", v); r.Status != http.StatusForbidden || !strings.Contains(strings.ToLower(r.Body), "nothing was changed") {
				t.Errorf("%s with %s: %d, want 403", f.name, name, r.Status)
			}
		}
	}
	after := e.getAs("bob", "/review/").Body
	ds, err := e.svc.OperatorDelegations(ctx, false)
	if err != nil || len(ds) != 1 || !strings.Contains(after, `name="revoke" value="`+ruleID+`"`) {
		t.Fatalf("refused forms changed something: delegations %v (%v), rule listed %t", ds, err, strings.Contains(after, ruleID))
	}
	// The inbox's own tokens, from the same bare browser.
	for _, f := range forms {
		v := url.Values{"token": {htmlUnescape(f.inbox)}}
		for k, vs := range f.values {
			v[k] = vs
		}
		if r := e.postBare("bob", v); r.Status != http.StatusSeeOther {
			t.Errorf("%s with the inbox's token: %d\n%s", f.name, r.Status, r.Body)
		}
	}
	if ds, err := e.svc.OperatorDelegations(ctx, false); err != nil || len(ds) != 1 || ds[0].To != "carol@example.com" {
		t.Errorf("after the forms: delegations %+v, %v; want only the new one to carol", ds, err)
	}
	if st := e.state(e.create("agent", gateInput("staging"))); st.Status != elicitation.StatusPending {
		t.Errorf("after the revoke a like call is %s, want pending", st.Status)
	}
}

// withInboxToken is form with the token name's inbox gives the form it
// is (revoke, end-delegation, else delegate); none when the inbox has no
// such form.
func (e *env) withInboxToken(name string, form url.Values) url.Values {
	e.t.Helper()
	inbox := e.getAs(name, "/review/").Body
	out := url.Values{}
	for k, vs := range form {
		out[k] = vs
	}
	var tok string
	switch {
	case form.Has("revoke"):
		for _, m := range revokeTokRE.FindAllStringSubmatch(inbox, -1) {
			if m[2] == form.Get("revoke") {
				tok = m[1]
			}
		}
	case form.Has("end-delegation"):
		for _, m := range endTokRE.FindAllStringSubmatch(inbox, -1) {
			if m[2] == form.Get("end-delegation") {
				tok = m[1]
			}
		}
	default:
		if m := delegateTokRE.FindStringSubmatch(inbox); m != nil {
			tok = m[1]
		}
	}
	if tok != "" {
		out.Set("token", htmlUnescape(tok))
	}
	return out
}
