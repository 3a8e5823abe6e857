package review_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/pagetoken"
	"github.com/mcp-elicitation/elicitation/internal/review"
)

var formSchema = json.RawMessage(`{"type":"object","properties":{
 "email":{"type":"string","format":"email","title":"Email"},
 "count":{"type":"integer","minimum":1,"maximum":5,"title":"Count"},
 "ratio":{"type":"number","maximum":1},
 "notify":{"type":"boolean","default":true},
 "when":{"type":"string","format":"date-time"},
 "env":{"type":"string","enum":["dev","prod"]},
 "tags":{"type":"array","items":{"type":"string","enum":["a","b","c"]},"maxItems":2,"default":["b"]},
 "note":{"type":"string","maxLength":10}
},"required":["email","count"]}`)

// TestBadSubmissions is the table of malformed submissions: each gets its
// own status and message, leaves the request pending, and is audited.
func TestBadSubmissions(t *testing.T) {
	e := newEnv(t, func(o *review.Options) {
		o.TokenTTL = 10 * time.Minute
		o.MaxBodyBytes = 64 << 10
		o.MaxValueBytes = 4 << 10
	})
	sel := e.selection(elicitation.Input{Message: "Pick two or three", Options: options(5), MinSelections: 2, MaxSelections: 3})
	one := e.selection(elicitation.Input{Message: "Pick one", Options: options(3)})
	appr := e.approval(elicitation.Input{Message: "Fill", RequestedSchema: formSchema})
	other := e.selection(elicitation.Input{Message: "Other", Options: options(2)})

	forged := func() string {
		k, _ := pagetoken.ParseKeyring("k1:" + pagetoken.GenerateSecret())
		tok, _ := k.Seal(pagetoken.Claims{ElicitationID: sel.ID, RenderID: "forged", Expires: t0.Add(time.Hour), RequestExpires: t0.Add(time.Hour)})
		return tok
	}

	cases := []struct {
		name    string
		target  *created
		path    string // default target.Path()
		form    func() url.Values
		body    string // raw body instead of form
		status  int
		want    string // in the page
		refusal string // audit detail; "" for no audit entry expected (unknown id / wrong key)
		before  func()
		after   func()
	}{
		{name: "unknown elicitation id", target: &sel, path: "unknown",
			form: func() url.Values {
				return url.Values{"token": {e.token(sel)}, "decision": {"submitted"}, "option": {"opt-1", "opt-2"}}
			}, status: 404, want: "There is no review request at this address"},
		{name: "wrong review key and no token", target: &sel, path: "wrongkey",
			form: func() url.Values {
				return url.Values{"decision": {"submitted"}, "option": {"opt-1", "opt-2"}}
			}, status: 404, want: "There is no review request at this address"},
		{name: "wrong review key", target: &sel, path: "wrongkey",
			form: func() url.Values {
				return url.Values{"token": {e.token(sel)}, "decision": {"submitted"}, "option": {"opt-1", "opt-2"}}
			}, status: 404, want: "There is no review request at this address"},
		{name: "unknown option id", target: &sel,
			form: func() url.Values {
				return url.Values{"token": {e.token(sel)}, "decision": {"submitted"}, "option": {"opt-1", "nope"}}
			}, status: 422, want: "&#34;nope&#34; is not one of the options", refusal: "invalid: selection does not satisfy the request"},
		{name: "duplicate option id", target: &sel,
			form: func() url.Values {
				return url.Values{"token": {e.token(sel)}, "decision": {"submitted"}, "option": {"opt-1", "opt-1"}}
			}, status: 422, want: "&#34;opt-1&#34; was picked twice", refusal: "invalid: selection does not satisfy the request"},
		{name: "too few", target: &sel,
			form: func() url.Values {
				return url.Values{"token": {e.token(sel)}, "decision": {"submitted"}, "option": {"opt-1"}}
			}, status: 422, want: "Pick between 2 and 3 options; 1 were picked", refusal: "invalid: selection does not satisfy the request"},
		{name: "too many", target: &sel,
			form: func() url.Values {
				return url.Values{"token": {e.token(sel)}, "decision": {"submitted"}, "option": {"opt-0", "opt-1", "opt-2", "opt-3"}}
			}, status: 422, want: "Pick between 2 and 3 options; 4 were picked", refusal: "invalid: selection does not satisfy the request"},
		{name: "none picked (single)", target: &one,
			form:   func() url.Values { return url.Values{"token": {e.token(one)}, "decision": {"submitted"}} },
			status: 422, want: "Pick exactly one option; 0 were picked", refusal: "invalid: selection does not satisfy the request"},
		{name: "unknown decision", target: &one,
			form: func() url.Values {
				return url.Values{"token": {e.token(one)}, "decision": {"maybe"}, "option": {"opt-0"}}
			}, status: 422, want: "Decision must be submitted or declined", refusal: "invalid: selection does not satisfy the request"},
		{name: "wrong form types", target: &appr,
			form: func() url.Values {
				return url.Values{"token": {e.token(appr)}, "decision": {"submitted"},
					"f.email": {"not-an-email"}, "f.count": {"2.5"}, "f.ratio": {"lots"}, "f.notify": {"perhaps"},
					"f.when": {"tomorrow"}, "f.env": {"staging"}, "f.tags": {"a", "z"}, "f.note": {"far too long for ten"}, "f.extra": {"x"}}
			}, status: 422, refusal: "invalid form: extra, email, count",
			want: "Email must be an email address like name@example.com"},
		{name: "form out of bounds", target: &appr,
			form: func() url.Values {
				return url.Values{"token": {e.token(appr)}, "decision": {"submitted"}, "f.email": {"a@example.com"}, "f.count": {"9"}, "f.tags": {"a", "b", "c"}}
			}, status: 422, want: "Count must be at most 5", refusal: "invalid form: "},
		{name: "missing required", target: &appr,
			form: func() url.Values {
				return url.Values{"token": {e.token(appr)}, "decision": {"submitted"}, "f.email": {""}}
			}, status: 422, want: "Email is required", refusal: "invalid form: "},
		{name: "missing token", target: &sel,
			form:   func() url.Values { return url.Values{"decision": {"submitted"}, "option": {"opt-1", "opt-2"}} },
			status: 403, want: "security token is missing or not valid", refusal: "missing page token"},
		{name: "two tokens", target: &sel,
			form: func() url.Values {
				return url.Values{"token": {e.token(sel), e.token(sel)}, "decision": {"submitted"}, "option": {"opt-1", "opt-2"}}
			}, status: 403, want: "security token is missing or not valid", refusal: "more than one page token"},
		{name: "forged token", target: &sel,
			form: func() url.Values {
				return url.Values{"token": {forged()}, "decision": {"submitted"}, "option": {"opt-1", "opt-2"}}
			}, status: 403, want: "security token is missing or not valid", refusal: "invalid page token"},
		{name: "garbage token", target: &sel,
			form: func() url.Values {
				return url.Values{"token": {"v1.k1.e30.AAAA"}, "decision": {"submitted"}, "option": {"opt-1", "opt-2"}}
			}, status: 403, want: "security token is missing or not valid", refusal: "invalid page token"},
		{name: "other request's token", target: &sel,
			form: func() url.Values {
				return url.Values{"token": {e.token(other)}, "decision": {"submitted"}, "option": {"opt-1", "opt-2"}}
			}, status: 403, want: "security token is missing or not valid", refusal: "page token of another request"},
		{name: "expired token", target: &sel,
			form: func() url.Values {
				tok := e.token(sel)
				e.clock.Add(11 * time.Minute)
				return url.Values{"token": {tok}, "decision": {"submitted"}, "option": {"opt-1", "opt-2"}}
			}, status: 403, want: "Reload the page", refusal: "page token expired"},
		{name: "oversized value", target: &sel,
			form: func() url.Values {
				return url.Values{"token": {e.token(sel)}, "decision": {"submitted"}, "option": {"opt-1", strings.Repeat("x", 5000)}}
			}, status: 413, want: "longer than the server accepts", refusal: "value too large"},
		{name: "oversized form field", target: &appr,
			form: func() url.Values {
				return url.Values{"token": {e.token(appr)}, "decision": {"submitted"}, "f.email": {"a@example.com"}, "f.count": {"1"}, "f.note": {strings.Repeat("é", 3000)}}
			}, status: 413, want: "longer than the server accepts", refusal: "value too large"},
		// A field the page sends once, sent twice: which one the reviewer
		// meant cannot be known, so nothing is decided (the first was).
		{name: "two decisions", target: &one,
			form: func() url.Values {
				return url.Values{"token": {e.token(one)}, "decision": {"declined", "submitted"}, "option": {"opt-0"}}
			}, status: 400, want: "The submission could not be read", refusal: "malformed body"},
		{name: "two comments", target: &one,
			form: func() url.Values {
				return url.Values{"token": {e.token(one)}, "decision": {"submitted"}, "option": {"opt-0"}, "comment": {"yes", "no"}}
			}, status: 400, want: "The submission could not be read", refusal: "malformed body"},
		{name: "two durations of a standing approval", target: &one,
			form: func() url.Values {
				return url.Values{"token": {e.token(one)}, "decision": {"submitted"}, "option": {"opt-0"}, "rule": {"1"}, "rule.for": {"1h0m0s", "24h0m0s"}, "rule.uses": {"1"}}
			}, status: 400, want: "The submission could not be read", refusal: "malformed body"},
		{name: "oversized body", target: &sel,
			body:   "decision=submitted&" + strings.Repeat("option=opt-1&", 6000),
			status: 413, want: "larger than the server accepts", refusal: "body too large"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e.t = t
			e.clock.Set(t0)
			// Fresh requests, so that no audit cap hides an entry.
			sel = e.selection(elicitation.Input{Message: "Pick two or three", Options: options(5), MinSelections: 2, MaxSelections: 3})
			one = e.selection(elicitation.Input{Message: "Pick one", Options: options(3)})
			appr = e.approval(elicitation.Input{Message: "Fill", RequestedSchema: formSchema})
			other = e.selection(elicitation.Input{Message: "Other", Options: options(2)})
			before := len(e.audit(*tc.target).Entries)
			path := tc.target.Path()
			switch tc.path {
			case "unknown":
				path = review.Path("no-such-id-0000000000", tc.target.Key)
			case "wrongkey":
				path = review.Path(tc.target.ID, "wrong-key-wrong-key-wrong-key-wrong-key-0")
			}
			var r response
			if tc.form != nil {
				r = e.post(path, tc.form())
			} else {
				r = e.postBody(path, "application/x-www-form-urlencoded", strings.NewReader(tc.body))
			}
			if r.Status != tc.status {
				t.Errorf("status %d, want %d", r.Status, tc.status)
			}
			if !strings.Contains(r.Body, tc.want) {
				t.Errorf("page lacks %q:\n%s", tc.want, tail(r.Body))
			}
			checkHeaders(t, r)
			e.clock.Set(t0)
			if st := e.state(*tc.target); st.Status != elicitation.StatusPending || st.Decision != "" {
				t.Errorf("request decided: %+v", st)
			}
			tr := e.audit(*tc.target)
			if tc.refusal != "" {
				if got := lastRefusal(tr); !strings.HasPrefix(got, tc.refusal) {
					t.Errorf("audit refusal %q, want %q", got, tc.refusal)
				}
			}
			for _, en := range tr.Entries[before:] {
				if en.Action == elicitation.ActionDecided {
					t.Errorf("audit has a decision: %+v", en)
				}
			}
		})
	}
	e.t = t
	// The form errors list every field at once.
	r := e.post(appr.Path(), url.Values{"token": {e.token(appr)}, "decision": {"submitted"},
		"f.email": {"nope"}, "f.count": {"2.5"}, "f.ratio": {"x"}, "f.notify": {"perhaps"}, "f.when": {"tomorrow"},
		"f.env": {"staging"}, "f.tags": {"a", "z"}, "f.note": {"far too long for ten"}, "f.extra": {"x"}})
	for _, want := range []string{"Count must be a whole number", "ratio must be a number", "notify must be true or false",
		"when must be a date and time like 2026-01-31T09:30 (UTC)", "env must be one of the offered choices", "tags must only hold the offered choices",
		"note must be at most 10 characters", "extra is not a field of this form", `aria-invalid="true"`, `value="nope"`} {
		if !strings.Contains(r.Body, want) {
			t.Errorf("422 page lacks %q", want)
		}
	}
	// After all that, a correct submission still lands.
	r = e.post(sel.Path(), url.Values{"token": {e.token(sel)}, "decision": {"submitted"}, "option": {"opt-1", "opt-3"}})
	if r.Status != 200 || e.state(sel).Status != elicitation.StatusSubmitted {
		t.Fatalf("valid submission after refusals: %d %+v", r.Status, e.state(sel))
	}
}

func tail(s string) string {
	if i := strings.Index(s, "<main>"); i >= 0 {
		return s[i:]
	}
	return s
}

func checkHeaders(t *testing.T, r response) {
	t.Helper()
	for k, want := range map[string]string{
		"X-Frame-Options": "DENY", "Referrer-Policy": "same-origin", "Cache-Control": "no-store",
		"X-Content-Type-Options": "nosniff", "Content-Type": "text/html; charset=utf-8",
	} {
		if got := r.Header.Get(k); got != want {
			t.Errorf("%s: %q, want %q", k, got, want)
		}
	}
	csp := r.Header.Get("Content-Security-Policy")
	for _, d := range []string{"default-src 'none'", "script-src 'none'", "frame-ancestors 'none'", "form-action 'self'", "base-uri 'none'"} {
		if !strings.Contains(csp, d) {
			t.Errorf("CSP %q lacks %q", csp, d)
		}
	}
}

// TestTerminalStates: GET shows the final state (200); POST is refused with
// 409 (decided, canceled) or 410 (expired), except the retried winning
// submission, which gets its success again.
func TestTerminalStates(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()

	// Decided: the winner's retry succeeds; another render gets 409.
	won := e.selection(elicitation.Input{Message: "m", Options: options(3)})
	tokA, tokB := e.token(won), e.token(won)
	win := url.Values{"token": {tokA}, "decision": {"submitted"}, "option": {"opt-2"}}
	if r := e.post(won.Path(), win); r.Status != 200 || !strings.Contains(r.Body, "Selection sent") {
		t.Fatalf("first submit: %d", r.Status)
	}
	if r := e.post(won.Path(), win); r.Status != 200 || !strings.Contains(r.Body, "Selection sent") {
		t.Fatalf("retried winning submit: %d, want 200 again", r.Status)
	}
	if r := e.post(won.Path(), url.Values{"token": {tokB}, "decision": {"submitted"}, "option": {"opt-0"}}); r.Status != http.StatusConflict || !strings.Contains(r.Body, "has been answered") {
		t.Fatalf("second render's submit: %d, want 409", r.Status)
	}
	if r := e.post(won.Path(), url.Values{"token": {tokB}, "decision": {"declined"}}); r.Status != http.StatusConflict {
		t.Fatalf("decline after decision: %d, want 409", r.Status)
	}
	if r := e.get(won.Path()); r.Status != 200 || !strings.Contains(r.Body, "This request has been answered") || strings.Contains(r.Body, `name="token"`) {
		t.Fatalf("GET decided: %d", r.Status)
	}
	res, err := e.svc.Result(ctx, "agent", won.ID)
	if err != nil || len(res.SelectedIDs) != 1 || res.SelectedIDs[0] != "opt-2" {
		t.Fatalf("result %+v %v", res, err)
	}
	if r := e.get(won.Path()); r.Status != 200 || !strings.Contains(r.Body, "has been answered") {
		t.Fatalf("GET consumed: %d", r.Status)
	}

	// Declined (refine).
	dec := e.selection(elicitation.Input{Message: "m", Options: options(3)})
	if r := e.post(dec.Path(), url.Values{"token": {e.token(dec)}, "decision": {"declined"}, "option": {"opt-0"}}); r.Status != 200 || !strings.Contains(r.Body, "none of these") {
		t.Fatalf("refine: %d", r.Status)
	}
	if st := e.state(dec); st.Status != elicitation.StatusDeclined {
		t.Fatalf("refine state %+v", st)
	}

	// Canceled: 409.
	can := e.approval(elicitation.Input{Message: "m", Context: json.RawMessage(`{"a":1}`)})
	tok := e.token(can)
	if _, err := e.svc.Cancel(ctx, "agent", can.ID); err != nil {
		t.Fatal(err)
	}
	if r := e.post(can.Path(), url.Values{"token": {tok}, "decision": {"submitted"}}); r.Status != http.StatusConflict || !strings.Contains(r.Body, "canceled") {
		t.Fatalf("submit canceled: %d", r.Status)
	}
	if r := e.get(can.Path()); r.Status != 200 || !strings.Contains(r.Body, "The agent canceled this request") {
		t.Fatalf("GET canceled: %d", r.Status)
	}

	// Expired: 410, also with the page's token now past its expiry.
	exp := e.approval(elicitation.Input{Message: "m", Context: json.RawMessage(`{"a":1}`), TimeoutSeconds: 120})
	tok = e.token(exp)
	e.clock.Add(3 * time.Minute)
	if r := e.post(exp.Path(), url.Values{"token": {tok}, "decision": {"submitted"}}); r.Status != http.StatusGone || !strings.Contains(r.Body, "This request expired") {
		t.Fatalf("submit expired: %d", r.Status)
	}
	if r := e.get(exp.Path()); r.Status != 200 || !strings.Contains(r.Body, "This request expired") {
		t.Fatalf("GET expired: %d", r.Status)
	}
	if st := e.state(exp); st.Status != elicitation.StatusExpired {
		t.Fatalf("expired state %+v", st)
	}
	// A decision made before expiry keeps its outcome, and its retry still
	// succeeds after expiry.
	e.clock.Set(t0)
	late := e.selection(elicitation.Input{Message: "m", Options: options(2), TimeoutSeconds: 60})
	win = url.Values{"token": {e.token(late)}, "decision": {"submitted"}, "option": {"opt-1"}}
	if r := e.post(late.Path(), win); r.Status != 200 {
		t.Fatalf("submit: %d", r.Status)
	}
	e.clock.Add(5 * time.Minute)
	if r := e.post(late.Path(), win); r.Status != 200 {
		t.Fatalf("retry after expiry: %d, want 200", r.Status)
	}

	// Unknown id and wrong key: 404 for GET.
	if r := e.get(review.Path("nope", "nope")); r.Status != 404 {
		t.Fatalf("GET unknown: %d", r.Status)
	}
	if r := e.get(review.Path(won.ID, won.Key+"x")); r.Status != 404 {
		t.Fatalf("GET wrong key: %d", r.Status)
	}
}

// TestApprovalFlow fills the form and checks what the agent gets.
func TestApprovalFlow(t *testing.T) {
	e := newEnv(t)
	a := e.approval(elicitation.Input{Message: "Deploy?", Context: json.RawMessage(`{"service":"api","replicas":3}`), RequestedSchema: formSchema,
		Labels: elicitation.Labels{Submit: "Ship it", Decline: "Stop"}})
	page := e.get(a.Path())
	for _, want := range []string{`type="email"`, `type="number"`, `step="1"`, `min="1"`, `max="5"`, `type="datetime-local"`, "read as UTC",
		`<input type="checkbox" id="f-3" name="f.notify" value="true" checked`, `maxlength="10"`, "Ship it<span class=\"meaning\">(approve)</span>",
		"Stop<span class=\"meaning\">(decline)</span>", "&#34;replicas&#34;: 3", `name="f.tags" value="b" checked`} {
		if !strings.Contains(page.Body, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	tok := htmlUnescape(tokenRE.FindStringSubmatch(page.Body)[1])
	r := e.post(a.Path(), url.Values{"token": {tok}, "decision": {"submitted"}, "f.email": {"a@example.com"}, "f.count": {"3"},
		"f.when": {"2026-04-01T10:30"}, "f.tags": {"a", "c"}})
	if r.Status != 200 || !strings.Contains(r.Body, "Approved") {
		t.Fatalf("approve: %d %s", r.Status, tail(r.Body))
	}
	res, err := e.svc.Result(context.Background(), "agent", a.ID)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	_ = json.Unmarshal(res.Form, &got)
	if got["email"] != "a@example.com" || got["count"] != 3.0 || got["notify"] != false || got["when"] != "2026-04-01T10:30:00Z" {
		t.Fatalf("form %s", res.Form)
	}
}

// TestMountedAlone: each handler works without the mux's wildcards, under a
// stage prefix, and refuses the other method.
func TestMountedAlone(t *testing.T) {
	e := newEnv(t)
	c := e.selection(elicitation.Input{Message: "m", Options: options(2)})
	page := http.StripPrefix("/prod", e.handler.PageHandler())
	submit := e.handler.SubmitHandler()
	rec := doReq(page, "GET", "/prod"+c.Path(), "")
	if rec.Status != 200 || !strings.Contains(rec.Body, `name="token"`) {
		t.Fatalf("GET alone: %d", rec.Status)
	}
	if r := doReq(page, "POST", "/prod"+c.Path(), ""); r.Status != http.StatusMethodNotAllowed {
		t.Fatalf("POST to the page handler: %d", r.Status)
	}
	tok := htmlUnescape(tokenRE.FindStringSubmatch(rec.Body)[1])
	form := url.Values{"token": {tok}, "decision": {"submitted"}, "option": {"opt-0"}}.Encode()
	if r := doReq(submit, "POST", "/stage"+c.Path(), form); r.Status != 200 {
		t.Fatalf("POST alone: %d", r.Status)
	}
	if r := doReq(submit, "GET", c.Path(), ""); r.Status != http.StatusMethodNotAllowed {
		t.Fatalf("GET to the submit handler: %d", r.Status)
	}
}

// TestOtherMethods: a method other than GET, HEAD and POST at a review
// address gets the 405 page with the page's headers, not the mux's bare one.
func TestOtherMethods(t *testing.T) {
	e := newEnv(t)
	c := e.selection(elicitation.Input{Message: "m", Options: options(2)})
	for _, m := range []string{"PUT", "DELETE", "PATCH", "OPTIONS"} {
		r := doReq(e.mux, m, c.Path(), "")
		if r.Status != http.StatusMethodNotAllowed {
			t.Errorf("%s: status %d, want 405", m, r.Status)
		}
		if got := r.Header.Get("Allow"); got != "GET, HEAD, POST" {
			t.Errorf("%s: Allow %q", m, got)
		}
		checkHeaders(t, r)
	}
}

// TestIncompleteLinks: a review link missing its key (on a server without
// reviewer sign-in, the only way in is the key), or with a segment too
// many, gets the not-found page with the page's headers. (The review
// path's root is the inbox: TestInbox.)
func TestIncompleteLinks(t *testing.T) {
	e := newEnv(t)
	c := e.selection(elicitation.Input{Message: "m", Options: options(2)})
	for _, p := range []string{"/review/" + c.ID, "/review/" + c.ID + "/", c.Path() + "/x", "/review/x/y/z"} {
		for _, m := range []string{"GET", "POST"} {
			r := doReq(e.mux, m, p, "")
			if r.Status != http.StatusNotFound || !strings.Contains(r.Body, "Request not found") {
				t.Errorf("%s %s: status %d", m, p, r.Status)
			}
			checkHeaders(t, r)
		}
	}
}

// TestResentWithTheOtherButton: the same page sent again with the other
// button (back button after a decision) is not told that its answer was
// recorded.
func TestResentWithTheOtherButton(t *testing.T) {
	e := newEnv(t)
	c := e.approval(elicitation.Input{Message: "m", Context: json.RawMessage(`{"a":1}`)})
	tok := e.token(c)
	if r := e.post(c.Path(), url.Values{"token": {tok}, "decision": {"submitted"}}); r.Status != 200 || !strings.Contains(r.Body, "Approved") {
		t.Fatalf("approve: %d", r.Status)
	}
	r := e.post(c.Path(), url.Values{"token": {tok}, "decision": {"declined"}})
	if r.Status != http.StatusConflict || strings.Contains(r.Body, "Declined") || !strings.Contains(r.Body, "It was approved") {
		t.Errorf("decline with the same page: %d\n%s", r.Status, tail(r.Body))
	}
	if st := e.state(c); st.Decision != elicitation.DecisionSubmitted {
		t.Errorf("decision %q", st.Decision)
	}
	// The same answer again is still its success.
	if r := e.post(c.Path(), url.Values{"token": {tok}, "decision": {"submitted"}}); r.Status != 200 || !strings.Contains(r.Body, "Approved") {
		t.Errorf("approve again: %d", r.Status)
	}
}

// TestExpiredTokenWithoutRequestExpiry: an expired token that does not say
// when its request expires never decides a pending request.
func TestExpiredTokenWithoutRequestExpiry(t *testing.T) {
	e := newEnv(t)
	c := e.selection(elicitation.Input{Message: "m", Options: options(2)})
	tok, err := e.keys.Seal(pagetoken.Claims{ElicitationID: c.ID, RenderID: "render-old", Expires: t0.Add(time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	e.clock.Add(2 * time.Minute)
	r := e.post(c.Path(), url.Values{"token": {tok}, "decision": {"submitted"}, "option": {"opt-0"}})
	if r.Status != http.StatusForbidden {
		t.Errorf("status %d, want 403", r.Status)
	}
	if st := e.state(c); st.Status != elicitation.StatusPending {
		t.Errorf("request decided by an expired token: %+v", st)
	}
}
