package reviewauth_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/dynamostore"
	"github.com/mcp-elicitation/elicitation/internal/dynamostore/dynamotest"
	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/reviewauth"
	"github.com/mcp-elicitation/elicitation/internal/reviewauth/oidctest"
	"github.com/mcp-elicitation/elicitation/internal/testenv"
)

// recorder keeps the Set-Cookie headers a client receives.
type recorder struct {
	next    http.RoundTripper
	cookies []*http.Cookie
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.next.RoundTrip(req)
	if err == nil {
		r.cookies = append(r.cookies, resp.Cookies()...)
	}
	return resp, err
}

// The round trip: an unsigned reviewer is sent to the issuer, signs in,
// comes back to the page and decides; the decision and the render record
// who they are; the one cookie is HttpOnly, Secure, SameSite=Lax and
// scoped to /review.
func TestSignInRoundTrip(t *testing.T) {
	t.Parallel()
	s := newStack(t, elicitation.ReviewerPolicy{BarOwner: true}, boltStore(t))
	id, page := s.create(t, 0, "agent@example.com", elicitation.Input{})
	b := oidctest.Browser(t)
	rec := &recorder{next: http.DefaultTransport}
	b.Transport = rec

	// Unsigned: the page redirects to the issuer, and nothing is rendered.
	noFollow := *b
	noFollow.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := noFollow.Get(page)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	loc, _ := url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode != http.StatusFound || !strings.HasPrefix(loc.String(), s.provider.Issuer) || loc.Query().Get("code_challenge_method") != "S256" || loc.Query().Get("code_challenge") == "" || loc.Query().Get("nonce") == "" || loc.Query().Get("state") == "" {
		t.Fatalf("unsigned GET = %d to %s; want a redirect to the issuer with PKCE (S256), state and nonce", resp.StatusCode, loc)
	}
	if got := trail(t, s.instances[0].svc, id); len(got) != 1 {
		t.Fatalf("an unsigned GET was audited: %v", got)
	}

	code, body := approve(t, b, page, "alice", "eu")
	if code != http.StatusOK || !strings.Contains(body, "Selection sent") {
		t.Fatalf("alice's submission: %d\n%.600s", code, body)
	}
	st := state(t, s.instances[0].svc, "agent@example.com", id)
	if st.Status != elicitation.StatusSubmitted || st.DecidedBy != "alice@example.com" {
		t.Fatalf("state = %+v, want submitted by alice@example.com", st)
	}
	res, err := s.instances[0].svc.Result(context.Background(), "agent@example.com", id)
	if err != nil || res.DecidedBy != "alice@example.com" {
		t.Fatalf("result decidedBy = %q, %v", res.DecidedBy, err)
	}
	want := []string{"created agent@example.com selection", "rendered alice@example.com pending", "decided alice@example.com submitted", "result_fetched agent@example.com "}
	if got := trail(t, s.instances[0].svc, id); !slices.Equal(got, want) {
		t.Errorf("audit trail\n%q\nwant\n%q", got, want)
	}
	var session, login *http.Cookie
	for _, c := range rec.cookies {
		const want = "/review"
		switch {
		case c.Name == reviewauth.CookieName:
			session = c
		case strings.HasPrefix(c.Name, reviewauth.LoginCookiePrefix):
			if c.Name == reviewauth.LoginCookiePrefix+loc.Query().Get("state") {
				login = c
			}
		default:
			t.Errorf("the product set another cookie: %s", c.Name)
		}
		if !c.HttpOnly || !c.Secure || c.SameSite != http.SameSiteLaxMode || c.Path != want {
			t.Errorf("cookie %s: HttpOnly %v Secure %v SameSite %v Path %q; want HttpOnly, Secure, Lax, %s", c.Name, c.HttpOnly, c.Secure, c.SameSite, c.Path, want)
		}
	}
	if login == nil || login.MaxAge != int(reviewauth.LoginTTL/time.Second) || login.Name != reviewauth.LoginCookiePrefix+loc.Query().Get("state") {
		t.Errorf("sign-in cookie = %+v, want one named after the state %q living %v", login, loc.Query().Get("state"), reviewauth.LoginTTL)
	}
	if session == nil || session.MaxAge != int(reviewauth.DefaultSessionTTL/time.Second) {
		t.Errorf("session cookie = %+v, want one living %v", session, reviewauth.DefaultSessionTTL)
	}
}

// Who may decide: a reviewer not on the list and the agent's own
// principal are refused, at the page and at submission, and audited.
func TestWhoMayDecide(t *testing.T) {
	t.Parallel()
	s := newStack(t, elicitation.ReviewerPolicy{BarOwner: true}, boltStore(t))
	id, page := s.create(t, 0, "agent@example.com", elicitation.Input{})
	named, namedPage := s.create(t, 0, "agent@example.com", elicitation.Input{Message: "Ship?", Options: opts(), Reviewers: []string{"bob@example.com"}})

	for _, tc := range []struct{ user, page string }{{"agent", page}, {"mallory", namedPage}, {"eve", namedPage}} {
		resp, body := open(t, oidctest.Browser(t), tc.page, tc.user)
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "You cannot decide this request") || strings.Contains(body, `name="token"`) {
			t.Errorf("%s opening the page: %d\n%.400s", tc.user, resp.StatusCode, body)
		}
	}
	// Mallory follows "Sign in with another account": the issuer asks her
	// to sign in again, and as Bob she is back on the page.
	b := oidctest.Browser(t)
	_, body := open(t, b, namedPage, "mallory")
	m := regexp.MustCompile(`<a href="([^"]+)">Sign in with another account</a>`).FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("the 403 page offers no other account:\n%.600s", body)
	}
	link, _ := url.Parse(namedPage)
	link, _ = link.Parse(html.UnescapeString(m[1]))
	if link.Path != reviewauth.SwitchPath {
		t.Fatalf("switch link %s, want %s", link, reviewauth.SwitchPath)
	}
	noFollow := *b
	noFollow.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	if r, err := noFollow.Get(link.String()); err != nil || r.StatusCode != http.StatusFound || !strings.Contains(r.Header.Get("Location"), "prompt=login") {
		t.Fatalf("the switch link: %v %v, want a redirect to the issuer with prompt=login", r, err)
	}
	resp, body := open(t, b, link.String(), "bob")
	if resp.StatusCode != http.StatusOK || resp.Request.URL.String() != namedPage || !strings.Contains(body, "Signed in as <strong>bob@example.com</strong>") {
		t.Fatalf("after switching to bob: %d at %s\n%.400s", resp.StatusCode, resp.Request.URL, body)
	}
	// Alice may decide the first (any signed-in reviewer but the agent)
	// and not the second (Bob only); a POST by her to the second is
	// refused even with a page token of the first.
	b = oidctest.Browser(t)
	resp, body = open(t, b, page, "alice")
	m = tokenField.FindStringSubmatch(body)
	if resp.StatusCode != http.StatusOK || m == nil {
		t.Fatalf("alice: %d", resp.StatusCode)
	}
	code, _ := post(t, b, namedPage, url.Values{"token": {m[1]}, "decision": {"submitted"}, "option": {"a"}})
	if code != http.StatusForbidden {
		t.Errorf("alice posting to bob's request: %d, want 403", code)
	}
	if st := state(t, s.instances[0].svc, "agent@example.com", named); st.Status != elicitation.StatusPending {
		t.Fatalf("bob's request was decided: %+v", st)
	}
	if code, body := approve(t, oidctest.Browser(t), namedPage, "bob", "a"); code != http.StatusOK {
		t.Fatalf("bob: %d %.300s", code, body)
	}
	got := trail(t, s.instances[0].svc, named)
	for _, want := range []string{
		"rendered mallory@example.com refused: forbidden: not a named reviewer: not allowed",
		"rendered sub:id-eve refused: forbidden: not a named reviewer: not allowed",
		"decided bob@example.com submitted",
	} {
		if !slices.Contains(got, want) {
			t.Errorf("audit trail lacks %q:\n%q", want, got)
		}
	}
	if got := trail(t, s.instances[0].svc, id); !slices.Contains(got, "rendered agent@example.com refused: forbidden: the request's own principal: not allowed") {
		t.Errorf("the agent's refused render is not audited: %q", got)
	}
}

func opts() []json.RawMessage {
	return []json.RawMessage{json.RawMessage(`{"id":"a"}`), json.RawMessage(`{"id":"b"}`)}
}

// An expired or tampered session is no session: a GET goes back to the
// issuer, a POST is refused and decides nothing.
func TestExpiredOrTamperedSession(t *testing.T) {
	t.Parallel()
	s := newStack(t, elicitation.ReviewerPolicy{}, boltStore(t))
	id, page := s.create(t, 0, "agent@example.com", elicitation.Input{})
	pageURL, _ := url.Parse(page)
	for _, tc := range []struct {
		name   string
		spoil  func(b *http.Client)
		expire bool
	}{
		{"expired", nil, true},
		{"tampered payload", func(b *http.Client) {
			tamper(b, pageURL, func(v string) string { return swapPayload(v, `"em":"alice@example.com"`, `"em":"bob@example.com"`) })
		}, false},
		{"another key", func(b *http.Client) {
			tamper(b, pageURL, func(v string) string { return strings.Replace(v, "c1.k1.", "c1.k0.", 1) })
		}, false},
		{"garbage", func(b *http.Client) { tamper(b, pageURL, func(string) string { return "x" }) }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := oidctest.Browser(t)
			resp, body := open(t, b, page, "alice")
			m := tokenField.FindStringSubmatch(body)
			if resp.StatusCode != http.StatusOK || m == nil {
				t.Fatalf("alice: %d", resp.StatusCode)
			}
			if tc.expire {
				s.clock.Add(reviewauth.DefaultSessionTTL)
				defer s.clock.Add(-reviewauth.DefaultSessionTTL)
			} else {
				tc.spoil(b)
			}
			code, body := post(t, b, page, url.Values{"token": {m[1]}, "decision": {"submitted"}, "option": {"eu"}})
			if code != http.StatusForbidden || !strings.Contains(body, "Sign in to review this request") {
				t.Errorf("POST with the %s session: %d\n%.400s", tc.name, code, body)
			}
			noFollow := *b
			noFollow.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
			resp, err := noFollow.Get(page)
			if err != nil {
				t.Fatal(err)
			}
			_ = resp.Body.Close()
			if resp.StatusCode != http.StatusFound || !strings.HasPrefix(resp.Header.Get("Location"), s.provider.Issuer) {
				t.Errorf("GET with the %s session: %d %s, want a redirect to the issuer", tc.name, resp.StatusCode, resp.Header.Get("Location"))
			}
		})
	}
	if st := state(t, s.instances[0].svc, "agent@example.com", id); st.Status != elicitation.StatusPending {
		t.Fatalf("a spoiled session decided: %+v", st)
	}
	if got := trail(t, s.instances[0].svc, id); !slices.Contains(got, "submission_refused reviewer forbidden: not signed in: not allowed") {
		t.Errorf("refusals not audited: %q", got)
	}
}

// tamper rewrites the browser's session cookie for u.
func tamper(b *http.Client, u *url.URL, f func(string) string) {
	for _, c := range b.Jar.Cookies(u) {
		if c.Name == reviewauth.CookieName {
			b.Jar.SetCookies(u, []*http.Cookie{{Name: c.Name, Value: f(c.Value), Path: "/review", Secure: true, HttpOnly: true}})
		}
	}
}

// swapPayload replaces old with new inside the cookie's base64 payload,
// keeping its signature.
func swapPayload(v, old, new string) string {
	parts := strings.Split(v, ".")
	if len(parts) != 4 {
		return v
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return v
	}
	parts[2] = base64.RawURLEncoding.EncodeToString([]byte(strings.Replace(string(b), old, new, 1)))
	return strings.Join(parts, ".")
}

// A callback whose state is not the sign-in's is refused, and so is one
// whose PKCE verifier is not the one the code was issued for (the issuer
// refuses the exchange).
func TestStateAndPKCEMismatch(t *testing.T) {
	t.Parallel()
	s := newStack(t, elicitation.ReviewerPolicy{}, boltStore(t))
	_, page := s.create(t, 0, "agent@example.com", elicitation.Input{})
	base := s.instances[0].srv.URL

	t.Run("state", func(t *testing.T) {
		b := oidctest.Browser(t)
		// Stop at our callback to learn the code, then send it back with
		// another state.
		var cb *url.URL
		b.CheckRedirect = func(r *http.Request, _ []*http.Request) error {
			if r.URL.Path == reviewauth.CallbackPath {
				cb = r.URL
				return http.ErrUseLastResponse
			}
			return nil
		}
		open(t, b, page, "alice")
		if cb == nil {
			t.Fatal("the issuer never redirected to the callback")
		}
		q := cb.Query()
		q.Set("state", "not-the-state")
		b.CheckRedirect = nil
		resp, err := b.Get(base + reviewauth.CallbackPath + "?" + q.Encode())
		if err != nil {
			t.Fatal(err)
		}
		body := readAll(resp)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "Sign-in did not complete") {
			t.Fatalf("callback with another state: %d\n%.300s", resp.StatusCode, body)
		}
		if _, ok := s.instances[0].auth.Session(withCookies(b, base)); ok {
			t.Fatal("a session was set")
		}
		// And no sign-in in progress at all.
		resp, err = oidctest.Browser(t).Get(base + reviewauth.CallbackPath + "?" + cb.RawQuery)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Fatalf("callback in another browser: %d, want 400", resp.StatusCode)
		}
	})

	t.Run("PKCE", func(t *testing.T) {
		b := oidctest.Browser(t)
		var cb *url.URL
		b.CheckRedirect = func(r *http.Request, _ []*http.Request) error {
			if r.URL.Path == reviewauth.CallbackPath {
				cb = r.URL
				return http.ErrUseLastResponse
			}
			return nil
		}
		open(t, b, page, "alice")
		if cb == nil {
			t.Fatal("the issuer never redirected to the callback")
		}
		// The same sign-in's state and nonce, another verifier.
		u, _ := url.Parse(base + reviewauth.CallbackPath)
		state := cb.Query().Get("state")
		tampered := false
		for _, c := range b.Jar.Cookies(u) {
			if c.Name == reviewauth.LoginCookiePrefix+state {
				tampered = true
				b.Jar.SetCookies(u, []*http.Cookie{{Name: c.Name, Value: reseal(t, s, state, c.Value), Path: "/review", Secure: true, HttpOnly: true}})
			}
		}
		if !tampered {
			t.Fatal("no sign-in cookie to replace")
		}
		b.CheckRedirect = nil
		resp, err := b.Get(cb.String())
		if err != nil {
			t.Fatal(err)
		}
		body := readAll(resp)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "Sign-in did not complete") {
			t.Fatalf("callback with another verifier: %d\n%.300s", resp.StatusCode, body)
		}
		if _, ok := s.instances[0].auth.Session(withCookies(b, base)); ok {
			t.Fatal("a session was set")
		}
	})
}

func withCookies(b *http.Client, base string) *http.Request {
	r, _ := http.NewRequest(http.MethodGet, base+"/review/x/y", nil)
	u, _ := url.Parse(base + "/review/x/y")
	for _, c := range b.Jar.Cookies(u) {
		r.AddCookie(c)
	}
	return r
}

// The quorum, on both stores: two reviewers reach approvals: 2, one
// reviewer twice does not, and two processes sharing the data count each
// approval once.
func TestQuorumOfTwo(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		stores func(t *testing.T) []elicitation.Store
	}{
		{"bolt", func(t *testing.T) []elicitation.Store { return []elicitation.Store{boltStore(t)} }},
		{"dynamodb, two processes", func(t *testing.T) []elicitation.Store {
			a, _, table := dynamotest.Store(t, dynamostore.Options{})
			b := dynamostore.New(dynamotest.Client(dynamotest.Endpoint(t)), table, dynamostore.Options{})
			return []elicitation.Store{a, b}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stores := tc.stores(t)
			s := newStack(t, elicitation.ReviewerPolicy{BarOwner: true}, stores...)
			other := len(stores) - 1 // bob's process
			id, page := s.create(t, 0, "agent@example.com", elicitation.Input{
				Message: "Rotate the keys?", Options: opts(), Approvals: 2, Reviewers: []string{"alice@example.com", "bob@example.com", "agent@example.com"},
			})
			bobPage := strings.Replace(page, s.instances[0].srv.URL, s.instances[other].srv.URL, 1)
			alice := oidctest.Browser(t)
			if code, body := approve(t, alice, page, "alice", "a"); code != http.StatusOK || !strings.Contains(body, "Your approval is counted") {
				t.Fatalf("alice's approval: %d\n%.400s", code, body)
			}
			// Alice again, from a fresh page: not counted, still pending.
			if code, body := approve(t, alice, page, "alice", "a"); code != http.StatusConflict || !strings.Contains(body, "already approved") {
				t.Fatalf("alice's second approval: %d\n%.400s", code, body)
			}
			// The agent's own principal cannot add the second.
			if resp, _ := open(t, oidctest.Browser(t), page, "agent"); resp.StatusCode != http.StatusForbidden {
				t.Fatalf("the agent's page: %d, want 403", resp.StatusCode)
			}
			if st := state(t, s.instances[other].svc, "agent@example.com", id); st.Status != elicitation.StatusPending || len(st.Approvers) != 1 {
				t.Fatalf("after one reviewer twice: %+v", st)
			}
			bob := oidctest.Browser(t)
			if _, body := open(t, bob, bobPage, "bob"); !strings.Contains(body, "decided when 2 reviewers approve the same answer") || !strings.Contains(body, "Approved so far by alice@example.com.") {
				t.Errorf("bob's page does not say where the quorum stands:\n%.1500s", body)
			}
			if code, body := approve(t, bob, bobPage, "bob", "a"); code != http.StatusOK || !strings.Contains(body, "Selection sent") {
				t.Fatalf("bob's approval: %d\n%.400s", code, body)
			}
			res, err := s.instances[0].svc.Result(context.Background(), "agent@example.com", id)
			if err != nil || res.Decision != elicitation.DecisionSubmitted || res.DecidedBy != "bob@example.com" || !slices.Equal(res.ApprovedBy, []string{"alice@example.com", "bob@example.com"}) {
				t.Fatalf("result: %+v, %v", res, err)
			}
			n := 0
			for _, e := range trail(t, s.instances[0].svc, id) {
				if strings.HasPrefix(e, "decided ") {
					n++
				}
			}
			if n != 1 {
				t.Errorf("%d decided entries, want 1", n)
			}
		})
	}
}

// A page token is bound to the signed-in reviewer it was rendered for:
// Alice approves, renders the page again, and her fresh token sent from
// Bob's session (a forgery that has Bob's browser post it) is refused, so
// one person cannot complete a quorum of two; Bob's own token counts.
func TestPageTokenBoundToReviewer(t *testing.T) {
	testenv.Slow(t, "OpenID provider")
	t.Parallel()
	s := newStack(t, elicitation.ReviewerPolicy{BarOwner: true}, boltStore(t))
	id, page := s.create(t, 0, "agent@example.com", elicitation.Input{
		Message: "Rotate the keys?", Options: opts(), Approvals: 2, Reviewers: []string{"alice@example.com", "bob@example.com"},
	})
	alice, bob := oidctest.Browser(t), oidctest.Browser(t)
	if code, body := approve(t, alice, page, "alice", "a"); code != http.StatusOK || !strings.Contains(body, "Your approval is counted") {
		t.Fatalf("alice's approval: %d\n%.400s", code, body)
	}
	_, body := open(t, alice, page, "alice")
	m := tokenField.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no token on alice's page:\n%.600s", body)
	}
	open(t, bob, page, "bob")
	code, body := post(t, bob, page, url.Values{"token": {html.UnescapeString(m[1])}, "decision": {"submitted"}, "option": {"a"}})
	if code != http.StatusForbidden || !strings.Contains(body, "This page cannot send an answer") {
		t.Fatalf("alice's token from bob's session: %d\n%.600s", code, body)
	}
	if st := state(t, s.instances[0].svc, "agent@example.com", id); st.Status != elicitation.StatusPending || len(st.Approvers) != 1 {
		t.Fatalf("one person completed a quorum of two: %+v", st)
	}
	if got := trail(t, s.instances[0].svc, id); !slices.Contains(got, "submission_refused bob@example.com page token of another reviewer") {
		t.Errorf("the refusal is not audited under bob: %q", got)
	}
	if code, body := approve(t, bob, page, "bob", "a"); code != http.StatusOK || !strings.Contains(body, "Selection sent") {
		t.Fatalf("bob's own approval: %d\n%.400s", code, body)
	}
}

// The origin check, over HTTP with the real provider: a signed-in
// reviewer's POST that says it comes from another port (Sec-Fetch-Site
// same-site), another site, or, from a browser without Sec-Fetch-Site,
// another origin or Origin: null (an opaque origin), is refused and
// audited; same-origin and no header at all pass on to the page token.
func TestCrossOriginSubmissions(t *testing.T) {
	testenv.Slow(t, "OpenID provider")
	t.Parallel()
	s := newStack(t, elicitation.ReviewerPolicy{BarOwner: true}, boltStore(t))
	id, page := s.create(t, 0, "agent@example.com", elicitation.Input{})
	b := oidctest.Browser(t)
	u, _ := url.Parse(page)
	self := "http://" + u.Host
	other := "http://127.0.0.1:1"
	cases := []struct {
		name, site, origin string
		refused            bool
	}{
		{"same-site", "same-site", other, true},
		{"cross-site", "cross-site", "https://evil.example", true},
		{"old browser, other origin", "", other, true},
		{"old browser, other host", "", "http://localhost" + u.Host[strings.LastIndexByte(u.Host, ':'):], true},
		{"same-origin", "same-origin", self, false},
		{"old browser, same origin", "", self, false},
		{"old browser, null origin", "", "null", true},
		{"no headers", "", "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, body := open(t, b, page, "alice")
			m := tokenField.FindStringSubmatch(body)
			if m == nil {
				t.Fatal("no token")
			}
			// Another request's id in the answer keeps it from deciding:
			// an unknown option is refused by the Service, after the
			// origin and token checks.
			form := url.Values{"token": {html.UnescapeString(m[1])}, "decision": {"submitted"}, "option": {"nowhere"}}
			req, _ := http.NewRequest(http.MethodPost, page, strings.NewReader(form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			if tc.site != "" {
				req.Header.Set("Sec-Fetch-Site", tc.site)
			}
			if tc.origin != "" {
				req.Header.Set("Origin", tc.origin)
			}
			resp, err := b.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			text := readAll(resp)
			_ = resp.Body.Close()
			crossed := resp.StatusCode == http.StatusForbidden && strings.Contains(text, "This answer came from another site")
			if crossed != tc.refused || (!tc.refused && resp.StatusCode != http.StatusUnprocessableEntity) {
				t.Errorf("%d, refused as cross-origin %v; want refused %v (else 422 for the unknown option)\n%.400s", resp.StatusCode, crossed, tc.refused, text)
			}
		})
	}
	if st := state(t, s.instances[0].svc, "agent@example.com", id); st.Status != elicitation.StatusPending {
		t.Fatalf("decided: %+v", st)
	}
	want := 0
	for _, tc := range cases {
		if tc.refused {
			want++
		}
	}
	n := 0
	for _, e := range trail(t, s.instances[0].svc, id) {
		if e == "submission_refused alice@example.com cross-origin submission" {
			n++
		}
	}
	if n != want {
		t.Errorf("%d cross-origin refusals audited, want %d: %q", n, want, trail(t, s.instances[0].svc, id))
	}
}

// A stray or stale callback leaves an existing session alone, and two
// sign-ins in parallel in one browser (two tabs) both complete: each
// sign-in has its own cookie, found by its state.
func TestStrayCallbackAndTwoTabs(t *testing.T) {
	testenv.Slow(t, "OpenID provider")
	t.Parallel()
	s := newStack(t, elicitation.ReviewerPolicy{}, boltStore(t))
	_, page1 := s.create(t, 0, "agent@example.com", elicitation.Input{})
	_, page2 := s.create(t, 0, "agent@example.com", elicitation.Input{})
	base := s.instances[0].srv.URL

	// Two tabs of one browser start a sign-in each before either returns.
	b := oidctest.Browser(t)
	var callbacks []*url.URL
	b.CheckRedirect = func(r *http.Request, _ []*http.Request) error {
		if r.URL.Path == reviewauth.CallbackPath {
			callbacks = append(callbacks, r.URL)
			return http.ErrUseLastResponse
		}
		return nil
	}
	open(t, b, page1, "alice")
	open(t, b, page2, "alice")
	if len(callbacks) != 2 {
		t.Fatalf("%d callbacks, want 2", len(callbacks))
	}
	b.CheckRedirect = nil
	for i, want := range []string{page1, page2} {
		resp, err := b.Get(callbacks[i].String())
		if err != nil {
			t.Fatal(err)
		}
		body := readAll(resp)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK || resp.Request.URL.String() != want || !strings.Contains(body, "Signed in as <strong>alice@example.com</strong>") {
			t.Fatalf("tab %d's callback: %d at %s\n%.400s", i+1, resp.StatusCode, resp.Request.URL, body)
		}
	}
	// Stray callbacks: a bare GET, an unknown state, a state of ours
	// without its cookie, the first tab's callback again (stale), the
	// issuer's error for a state of another browser. Each is refused,
	// and the session stays.
	stray := []string{
		base + reviewauth.CallbackPath,
		base + reviewauth.CallbackPath + "?state=" + strings.Repeat("A", 32) + "&code=x",
		base + reviewauth.CallbackPath + "?state=%3B%20evil&code=x",
		callbacks[0].String(),
		base + reviewauth.CallbackPath + "?state=" + callbacks[1].Query().Get("state") + "&error=access_denied",
	}
	for _, u := range stray {
		resp, err := b.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		body := readAll(resp)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "Sign-in did not complete") {
			t.Errorf("stray callback %s: %d\n%.300s", u, resp.StatusCode, body)
		}
		for _, c := range resp.Cookies() {
			if c.Name == reviewauth.CookieName {
				t.Errorf("stray callback %s touched the session cookie: %+v", u, c)
			}
		}
		if id, ok := s.instances[0].auth.Session(withCookies(b, base)); !ok || id.Email != "alice@example.com" {
			t.Fatalf("after the stray callback %s the session is gone", u)
		}
	}
	noFollow := *b
	noFollow.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := noFollow.Get(page1)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the page after stray callbacks: %d, want 200 without a new sign-in", resp.StatusCode)
	}
}

// A browser keeps at most MaxLogins sign-ins in progress: more tabs (or a
// flood of sign-in starts) remove the oldest, the newest still complete.
func TestSignInsInProgressBounded(t *testing.T) {
	t.Parallel()
	s := newStack(t, elicitation.ReviewerPolicy{}, boltStore(t))
	_, page := s.create(t, 0, "agent@example.com", elicitation.Input{})
	base := s.instances[0].srv.URL
	b := oidctest.Browser(t)
	b.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	var states []string
	for range reviewauth.MaxLogins + 3 {
		resp, err := b.Get(page)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		loc, _ := url.Parse(resp.Header.Get("Location"))
		states = append(states, loc.Query().Get("state"))
	}
	u, _ := url.Parse(base + reviewauth.CallbackPath)
	var kept []string
	for _, c := range b.Jar.Cookies(u) {
		if st, ok := strings.CutPrefix(c.Name, reviewauth.LoginCookiePrefix); ok {
			kept = append(kept, st)
		}
	}
	slices.Sort(kept)
	newest := slices.Clone(states[len(states)-reviewauth.MaxLogins:])
	slices.Sort(newest)
	if !slices.Equal(kept, newest) {
		t.Fatalf("the browser keeps sign-ins %q, want the %d newest %q", kept, reviewauth.MaxLogins, newest)
	}
	// The newest completes.
	b.CheckRedirect = nil
	if resp, _ := open(t, b, page, "alice"); resp.StatusCode != http.StatusOK {
		t.Fatalf("signing in after the flood: %d", resp.StatusCode)
	}
}
