package review_test

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mcp-elicitation/elicitation/internal/boltstore"
	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/pagetoken"
	"github.com/mcp-elicitation/elicitation/internal/review"
	"github.com/mcp-elicitation/elicitation/internal/testclock"
	"github.com/mcp-elicitation/elicitation/internal/testenv"
)

// The reviewers of the inbox tests, by the name a test signs in as.
var reviewers = map[string]elicitation.Identity{
	"bob":   {Issuer: "https://idp.test", Subject: "b1", Email: "bob@example.com", EmailVerified: true, Groups: []string{"ops"}},
	"carol": {Issuer: "https://idp.test", Subject: "c1", Email: "carol@example.com", EmailVerified: true},
	"eve":   {Issuer: "https://idp.test", Subject: "e1", Email: "eve@example.com", EmailVerified: true},
}

// reviewerCookie names the cookie the fake sign-in reads.
const reviewerCookie = "test_reviewer"

// fakeSignIn stands in for internal/reviewauth at the edge: it puts the
// identity named by the test's cookie in the request's context, as the
// real middleware does with a session; GET /__test/signin?as=NAME sets the
// cookie (for the browser). internal/reviewauth's own tests sign in
// through a real OpenID provider.
func fakeSignIn(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/__test/signin" {
			http.SetCookie(w, &http.Cookie{Name: reviewerCookie, Value: r.URL.Query().Get("as"), Path: "/"})
			http.Redirect(w, r, "/review/", http.StatusFound)
			return
		}
		if ck, err := r.Cookie(reviewerCookie); err == nil {
			if id, ok := reviewers[ck.Value]; ok {
				r = r.WithContext(elicitation.WithIdentity(r.Context(), id))
			}
		}
		next.ServeHTTP(w, r)
	})
}

// newSignedInEnv is newEnv on a Service with reviewer sign-in and the
// owner bar, behind fakeSignIn.
func newSignedInEnv(t testing.TB, opts ...func(*review.Options)) *env {
	t.Helper()
	e := &env{t: t, clock: testclock.New(t0)}
	st, err := boltstore.Open(filepath.Join(t.TempDir(), "store.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	e.store = st
	checker := testChecker()
	e.svc = elicitation.NewService(elicitation.Config{Store: st, Now: e.clock.Now, Templates: checker, SignIn: true, Policy: elicitation.ReviewerPolicy{BarOwner: true}})
	if e.keys, err = pagetoken.ParseKeyring(testKeys); err != nil {
		t.Fatal(err)
	}
	o := review.Options{Service: e.svc, Tokens: e.keys, Now: e.clock.Now, Templates: checker,
		NewRenderID: func() string { return fmt.Sprintf("render-%04d", e.renders.Add(1)) }}
	for _, f := range opts {
		f(&o)
	}
	e.handler = review.New(o)
	e.mux = http.NewServeMux()
	e.handler.Routes(e.mux)
	e.srv = newServer(t, fakeSignIn(e.mux))
	return e
}

// as is an HTTP client signed in as name (through the fake's cookie).
func (e *env) as(name string) *http.Client {
	e.t.Helper()
	jar, _ := cookiejar.New(nil)
	u, _ := url.Parse(e.srv.URL)
	jar.SetCookies(u, []*http.Cookie{{Name: reviewerCookie, Value: name, Path: "/"}})
	return &http.Client{Jar: jar}
}

func (e *env) getAs(name, path string) response {
	e.t.Helper()
	res, err := e.as(name).Get(e.srv.URL + path)
	if err != nil {
		e.t.Fatal(err)
	}
	return read(e.t, res)
}

func (e *env) postAs(name, path string, form url.Values) response {
	e.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, e.srv.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", e.srv.URL)
	res, err := e.as(name).Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	return read(e.t, res)
}

// create makes a request as owner.
func (e *env) create(owner string, in elicitation.Input) created {
	e.t.Helper()
	if in.Context == nil {
		in.Context = json.RawMessage(`1`)
	}
	c, err := e.svc.Create(context.Background(), owner, elicitation.KindApproval, in)
	if err != nil {
		e.t.Fatalf("creating an approval: %v", err)
	}
	return created{c.State.ID, c.ReviewKey}
}

var (
	rowRE   = regexp.MustCompile(`<a class="open" href="\./([^"]+)">([^<]*)</a>`)
	titleRE = regexp.MustCompile(`<title>([^<]*)</title>`)
	nextRE  = regexp.MustCompile(`<a href="([^"]+)" rel="next">`)
	prevRE  = regexp.MustCompile(`<a href="([^"]+)" rel="prev">`)
	firstRE = regexp.MustCompile(`<a href="([^"]+)">Back to the most urgent</a>`)
	shownRE = regexp.MustCompile(`<p class="note" id="shown">([^<]*)</p>`)
)

// rows are the ids an inbox page lists, in order.
func rows(body string) []string {
	var out []string
	for _, m := range rowRE.FindAllStringSubmatch(body, -1) {
		out = append(out, m[1])
	}
	return out
}

// inboxFixture is the requests of the inbox tests, by name.
type inboxFixture map[string]created

func newInboxFixture(e *env) inboxFixture {
	f := inboxFixture{
		"later":  e.create("deploy-bot", elicitation.Input{Message: "Deploy api v1.3?\nreplicas: 3", TimeoutSeconds: 3600}),
		"urgent": e.create("deploy-bot", elicitation.Input{Message: "Rotate the **key**", TimeoutSeconds: 300, Reviewers: []string{"group:ops"}}),
		"carols": e.create("deploy-bot", elicitation.Input{Message: "Only carol", TimeoutSeconds: 900, Reviewers: []string{"carol@example.com"}}),
		"bobs":   e.create("bob@example.com", elicitation.Input{Message: "Bob's own", TimeoutSeconds: 1200}),
		"quorum": e.create("ci-bot", elicitation.Input{Message: "Two of us <b>must</b> agree", TimeoutSeconds: 1800, Reviewers: []string{"bob@example.com", "carol@example.com", "dave@example.com"}, Approvals: 2}),
	}
	sel, err := e.svc.Create(context.Background(), "ci-bot", elicitation.KindSelection, elicitation.Input{Message: "Pick a region", Options: raws(`{"id":"eu"}`, `{"id":"us"}`), TimeoutSeconds: 2400})
	if err != nil {
		e.t.Fatal(err)
	}
	f["region"] = created{sel.State.ID, sel.ReviewKey}
	return f
}

func (f inboxFixture) ids(names ...string) []string {
	out := []string{}
	for _, n := range names {
		out = append(out, f[n].ID)
	}
	return out
}

// normalize replaces the fixture's ids with their names.
func (f inboxFixture) normalize(body string) string {
	for name, c := range f {
		body = strings.ReplaceAll(body, c.ID, "ID-"+name)
	}
	return body
}

// TestInbox: who sees what, most urgent first (the one may-decide rule:
// named reviewers, groups, the default of anyone, never the barred
// creator), the filters by agent and kind, the count in the title, the
// quorum's progress; golden pages of bob's inbox and of a filter.
func TestInbox(t *testing.T) {
	e := newSignedInEnv(t)
	f := newInboxFixture(e)
	// Carol approves the quorum: 1 of 2.
	tok := tokenRE.FindStringSubmatch(e.getAs("carol", review.Path(f["quorum"].ID, elicitation.NoKey)).Body)
	if tok == nil {
		t.Fatal("carol's keyless page has no token")
	}
	if r := e.postAs("carol", review.Path(f["quorum"].ID, elicitation.NoKey), url.Values{"token": {htmlUnescape(tok[1])}, "decision": {"submitted"}}); r.Status != http.StatusOK || !strings.Contains(r.Body, "Your approval is counted") {
		t.Fatalf("carol's approval: %d", r.Status)
	}
	for _, tc := range []struct {
		name, who, query string
		want             []string
		title            string
		quorum           string
	}{
		{"bob: ops, named in the quorum, not his own", "bob", "", f.ids("urgent", "quorum", "region", "later"), "Inbox (4): requests waiting for you", "1 of 2 approvals, yours missing"},
		{"carol: named, and anyone's by default", "carol", "", f.ids("carols", "bobs", "quorum", "region", "later"), "Inbox (5): requests waiting for you", "1 of 2 approvals, yours counted"},
		{"eve: only what anyone may decide", "eve", "", f.ids("bobs", "region", "later"), "Inbox (3): requests waiting for you", ""},
		{"by agent", "bob", "?agent=ci-bot", f.ids("quorum", "region"), "Inbox (2 of 4): requests waiting for you", "1 of 2 approvals, yours missing"},
		{"by kind", "bob", "?kind=selection", f.ids("region"), "Inbox (1 of 4): requests waiting for you", ""},
		{"by both", "carol", "?agent=deploy-bot&kind=approval", f.ids("carols", "later"), "Inbox (2 of 5): requests waiting for you", ""},
		{"an agent with nothing waiting", "eve", "?agent=nobody", []string{}, "Inbox (0 of 3): requests waiting for you", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e.t = t
			r := e.getAs(tc.who, "/review/"+tc.query)
			if r.Status != http.StatusOK {
				t.Fatalf("status %d", r.Status)
			}
			checkHeaders(t, r)
			if got := rows(r.Body); !slices.Equal(got, tc.want) && !(len(got) == 0 && len(tc.want) == 0) {
				t.Errorf("rows %v, want %v", got, tc.want)
			}
			if m := titleRE.FindStringSubmatch(r.Body); m == nil || m[1] != tc.title {
				t.Errorf("title %v, want %q", m, tc.title)
			}
			if tc.quorum != "" && !strings.Contains(r.Body, `<span class="quorum">`+tc.quorum+`</span>`) {
				t.Errorf("no quorum line %q", tc.quorum)
			}
			if !strings.Contains(r.Body, "Signed in as <strong>"+reviewers[tc.who].Email+"</strong>") {
				t.Error("the page does not name the signed-in reviewer")
			}
		})
	}
	e.t = t
	// The forms' page tokens count renders: a placeholder.
	compareGolden(t, "inbox-bob", tokenValueRE.ReplaceAllString(f.normalize(e.getAs("bob", "/review/").Body), "PAGE-TOKEN"))
	compareGolden(t, "inbox-filtered", tokenValueRE.ReplaceAllString(f.normalize(e.getAs("carol", "/review/?agent=deploy-bot&kind=approval").Body), "PAGE-TOKEN"))
	// A decided request leaves the inbox; an expired one too.
	e.decideAs("bob", f["urgent"], "declined")
	if got := rows(e.getAs("bob", "/review/").Body); !slices.Equal(got, f.ids("quorum", "region", "later")) {
		t.Errorf("after bob's decline: %v", got)
	}
	e.clock.Add(2401e9)
	if got := rows(e.getAs("bob", "/review/").Body); !slices.Equal(got, f.ids("later")) {
		t.Errorf("40 minutes on: %v", got)
	}
}

// decideAs opens c without its key as who and sends decision.
func (e *env) decideAs(who string, c created, decision string) response {
	e.t.Helper()
	p := review.Path(c.ID, elicitation.NoKey)
	m := tokenRE.FindStringSubmatch(e.getAs(who, p).Body)
	if m == nil {
		e.t.Fatalf("%s: no page token on %s", who, p)
	}
	return e.postAs(who, p, url.Values{"token": {htmlUnescape(m[1])}, "decision": {decision}})
}

// TestInboxWithoutSignIn: on a server without reviewer sign-in, and for a
// request without a session, the inbox says it needs sign-in and lists
// nothing.
func TestInboxWithoutSignIn(t *testing.T) {
	plain := newEnv(t)
	plain.approval(elicitation.Input{Message: "Secret headline", Context: json.RawMessage(`1`)})
	signed := newSignedInEnv(t)
	signed.create("agent", elicitation.Input{Message: "Secret headline"})
	for name, get := range map[string]func() response{
		"no sign-in on the server": func() response { return plain.get("/review/") },
		"no sign-in, an identity in context": func() response {
			return doReq(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				plain.mux.ServeHTTP(w, r.WithContext(elicitation.WithIdentity(r.Context(), reviewers["bob"])))
			}), "GET", "/review/", "")
		},
		"sign-in, no session": func() response { return signed.get("/review/") },
	} {
		r := get()
		if r.Status != http.StatusNotFound || !strings.Contains(r.Body, "The inbox needs reviewer sign-in") || strings.Contains(r.Body, "Secret headline") || strings.Contains(r.Body, `class="inbox"`) {
			t.Errorf("%s: %d\n%s", name, r.Status, r.Body)
		}
		checkHeaders(t, r)
	}
	compareGolden(t, "inbox-no-sign-in", plain.get("/review/").Body)
	// POST /review/ is the inbox's forms (a batch: batch_test.go; revoking a
	// standing approval: inbox_rules_test.go), which need sign-in too.
	for _, body := range []url.Values{{"decision": {"submitted"}, "id": {"x"}}, {"revoke": {"x"}}} {
		if r := plain.post("/review/", body); r.Status != http.StatusNotFound || !strings.Contains(r.Body, "The inbox needs reviewer sign-in") {
			t.Errorf("POST /review/ %v: %d", body, r.Status)
		}
	}
	if r := doReq(plain.mux, "PUT", "/review/", ""); r.Status != http.StatusMethodNotAllowed || r.Header.Get("Allow") != "GET, HEAD, POST" {
		t.Errorf("PUT /review/: %d, Allow %q", r.Status, r.Header.Get("Allow"))
	}
}

// TestInboxBadFilter: a filter the page cannot read is a clear 400 that
// lists nothing and links back to the whole inbox.
func TestInboxBadFilter(t *testing.T) {
	e := newSignedInEnv(t)
	e.create("agent", elicitation.Input{Message: "m"})
	for _, q := range []string{
		"?kind=form", "?agent=" + strings.Repeat("a", review.MaxAgentFilter+1), "?kind=approval&kind=selection", "?agent=%ff",
		"?after=x", "?after=1.a&after=2.b", "?after=-5.abc", "?after=12.a%2Fb", "?after=12.", "?after=12." + strings.Repeat("a", 65),
		"?before=x", "?after=12.a&before=13.b",
	} {
		r := e.getAs("bob", "/review/"+q)
		if r.Status != http.StatusBadRequest || !strings.Contains(r.Body, "This filter cannot be read") || !strings.Contains(r.Body, `href="./"`) || len(rows(r.Body)) != 0 {
			t.Errorf("%.40s: %d", q, r.Status)
		}
	}
}

// TestInboxPages: beyond DefaultInboxRows the page lists the most urgent,
// says which rows of how many it shows and links to the next page; each
// page keeps the filter, links to the one ahead of it (the first page
// itself from the second) and, from the third, back to the most urgent;
// together the pages list every request once, in order, and the way back
// lists the same pages.
func TestInboxPages(t *testing.T) {
	e := newSignedInEnv(t)
	const rowsPerPage = elicitation.DefaultInboxRows
	n := 2*rowsPerPage + 1 // the last page is one row (TestInboxChromium's last is several)
	var want []string
	for i := range n {
		c := e.create("agent", elicitation.Input{Message: fmt.Sprintf("Request %d", i), TimeoutSeconds: 600 + i})
		want = append(want, c.ID)
	}
	type page struct {
		rows              []string
		shown             string
		next, prev, first string
	}
	open := func(t *testing.T, href string) page {
		t.Helper()
		r := e.getAs("bob", "/review/"+strings.TrimPrefix(html.UnescapeString(href), "./"))
		if r.Status != http.StatusOK {
			t.Fatalf("%s: %d", href, r.Status)
		}
		p := page{rows: rows(r.Body)}
		if m := shownRE.FindStringSubmatch(r.Body); m != nil {
			p.shown = m[1]
		}
		for _, l := range []struct {
			re  *regexp.Regexp
			dst *string
		}{{nextRE, &p.next}, {prevRE, &p.prev}, {firstRE, &p.first}} {
			if m := l.re.FindStringSubmatch(r.Body); m != nil {
				*l.dst = html.UnescapeString(m[1])
			}
		}
		return p
	}
	for _, tc := range []struct{ name, query string }{{"all", ""}, {"filtered", "?kind=approval"}} {
		t.Run(tc.name, func(t *testing.T) {
			home := "./" + tc.query
			p1 := open(t, home)
			if p1.shown != fmt.Sprintf("Requests 1–%d of %d, most urgent first.", rowsPerPage, n) || len(p1.rows) != rowsPerPage || p1.next == "" || p1.prev != "" || p1.first != "" {
				t.Fatalf("first page: %q, %d rows, next %q, prev %q, first %q", p1.shown, len(p1.rows), p1.next, p1.prev, p1.first)
			}
			p2 := open(t, p1.next)
			if p2.shown != fmt.Sprintf("Requests %d–%d of %d, most urgent first.", rowsPerPage+1, 2*rowsPerPage, n) || p2.next == "" || p2.prev != home || p2.first != "" {
				t.Fatalf("second page: %q, next %q, prev %q (want %q), first %q", p2.shown, p2.next, p2.prev, home, p2.first)
			}
			p3 := open(t, p2.next)
			if p3.shown != fmt.Sprintf("Request %d of %d.", n, n) || p3.next != "" || !strings.Contains(p3.prev, "before=") || p3.first != home {
				t.Fatalf("last page: %q, next %q, prev %q, first %q (want %q)", p3.shown, p3.next, p3.prev, p3.first, home)
			}
			for _, href := range []string{p1.next, p2.next, p3.prev} {
				if tc.query != "" && !strings.Contains(href, "kind=approval") {
					t.Errorf("%q drops the filter", href)
				}
			}
			if got := slices.Concat(p1.rows, p2.rows, p3.rows); !slices.Equal(got, want) {
				t.Errorf("the three pages list %d rows, not every request once in order", len(got))
			}
			back := open(t, p3.prev)
			if !slices.Equal(back.rows, p2.rows) || back.prev != home || back.next != p2.next {
				t.Errorf("the page ahead of the last: %d rows, prev %q, next %q; want the second page's", len(back.rows), back.prev, back.next)
			}
		})
	}
	// A link past every row (the rows after it were decided since).
	r := e.getAs("bob", "/review/?after=9000000000000000000.zz")
	if r.Status != http.StatusOK || len(rows(r.Body)) != 0 || !strings.Contains(r.Body, "Nothing waiting for you comes after the page you were on") || !strings.Contains(r.Body, `<a href="./">Back to the most urgent</a>`) || prevRE.MatchString(r.Body) {
		t.Errorf("past the end: %d, %d rows", r.Status, len(rows(r.Body)))
	}
}

// TestKeylessPage: a signed-in reviewer who may decide opens /review/{id}
// without the key and decides through the same page token, origin and
// exactly-once path; to anyone else the address does not exist (and
// nothing is audited); the key's link keeps working.
func TestKeylessPage(t *testing.T) {
	e := newSignedInEnv(t)
	f := newInboxFixture(e)
	p := review.Path(f["later"].ID, elicitation.NoKey)
	// Not signed in, not a reviewer, the barred creator: not found.
	for who, path := range map[string]string{"": p, "eve": review.Path(f["carols"].ID, elicitation.NoKey), "bob": review.Path(f["bobs"].ID, elicitation.NoKey)} {
		r := e.getAs(who, path)
		if r.Status != http.StatusNotFound || !strings.Contains(r.Body, "Request not found") {
			t.Errorf("%q GET %s: %d", who, path, r.Status)
		}
		if r := e.postAs(who, path, url.Values{"token": {"x"}, "decision": {"submitted"}}); r.Status != http.StatusNotFound {
			t.Errorf("%q POST %s: %d", who, path, r.Status)
		}
	}
	for _, n := range []string{"carols", "bobs"} {
		if tr := e.audit(f[n]); len(tr.Entries) != 1 {
			t.Errorf("%s: refused keyless visits were audited: %+v", n, tr.Entries)
		}
	}
	// Bob's page: a token rendered for him; a cross-origin send is refused.
	r := e.getAs("bob", p)
	m := tokenRE.FindStringSubmatch(r.Body)
	if r.Status != http.StatusOK || m == nil || !strings.Contains(r.Body, `<form method="post" id="answer"`) {
		t.Fatalf("bob's keyless page: %d", r.Status)
	}
	tok := htmlUnescape(m[1])
	req, _ := http.NewRequest(http.MethodPost, e.srv.URL+p, strings.NewReader(url.Values{"token": {tok}, "decision": {"submitted"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", "https://evil.example")
	res, err := e.as("bob").Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if r := read(t, res); r.Status != http.StatusForbidden || !strings.Contains(r.Body, "This answer came from another site") {
		t.Fatalf("cross-origin keyless POST: %d", r.Status)
	}
	// Carol cannot send bob's page.
	if r := e.postAs("carol", p, url.Values{"token": {tok}, "decision": {"submitted"}}); r.Status != http.StatusForbidden {
		t.Errorf("carol sending bob's token: %d", r.Status)
	}
	if lastRefusal(e.audit(f["later"])) != "page token of another reviewer" {
		t.Errorf("audit: %q", lastRefusal(e.audit(f["later"])))
	}
	// Bob's answer lands once; the same page again is the same success.
	form := url.Values{"token": {tok}, "decision": {"submitted"}}
	for i := range 2 {
		if r := e.postAs("bob", p, form); r.Status != http.StatusOK || !strings.Contains(r.Body, "Approved") {
			t.Fatalf("bob's approval, send %d: %d", i+1, r.Status)
		}
	}
	st, err := e.svc.Status(context.Background(), "deploy-bot", f["later"].ID)
	if err != nil {
		t.Fatal(err)
	}
	if st.Status != elicitation.StatusSubmitted || st.DecidedBy != "bob@example.com" {
		t.Fatalf("state %+v", st)
	}
	// The key's link still opens (and shows the decision) for a reviewer.
	if r := e.getAs("carol", f["later"].Path()); r.Status != http.StatusOK || !strings.Contains(r.Body, "This request has been answered") {
		t.Errorf("the key's link after the decision: %d", r.Status)
	}
}

// TestPathsMountedAlone: the page handler mounted alone (the review
// function) serves the inbox at the root, redirects /review to it, and
// reads /review/{id} as the keyless page.
func TestPathsMountedAlone(t *testing.T) {
	e := newSignedInEnv(t)
	c := e.create("agent", elicitation.Input{Message: "Alone"})
	h := fakeSignIn(http.StripPrefix("/prod", e.handler.PageHandler()))
	srv := newServer(t, h)
	client := e.as("bob")
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	get := func(p string) response {
		res, err := client.Get(srv.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		return read(t, res)
	}
	if r := get("/prod/review"); r.Status != http.StatusFound || r.Header.Get("Location") != "review/" {
		t.Errorf("/prod/review: %d → %q", r.Status, r.Header.Get("Location"))
	}
	if r := get("/prod/review/"); r.Status != http.StatusOK || !slices.Equal(rows(r.Body), []string{c.ID}) {
		t.Errorf("/prod/review/: %d %v", r.Status, rows(r.Body))
	}
	if r := get("/prod/review/" + c.ID); r.Status != http.StatusOK || !strings.Contains(r.Body, "Alone") {
		t.Errorf("keyless: %d", r.Status)
	}
	if r := get("/prod" + c.Path()); r.Status != http.StatusOK {
		t.Errorf("keyed: %d", r.Status)
	}
	if r := get("/prod/review/" + c.ID + "/k/x"); r.Status != http.StatusNotFound {
		t.Errorf("a segment too many: %d", r.Status)
	}
}

func newServer(t testing.TB, h http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// TestInboxChromium: the inbox in headless Chromium at 320 px in the dark
// scheme and at 390 px in the light one: the count in the title, 44 px
// targets, no sideways scroll, no serious axe-core violation (the inbox,
// filtered, and the page without sign-in), the filter as a GET form
// without script, a row that opens the review page without the key, and
// the approval sent there, after which the inbox has one row fewer.
func TestInboxChromium(t *testing.T) {
	testenv.Slow(t, "Chromium")
	t.Parallel()
	e := newSignedInEnv(t)
	for _, r := range []struct {
		owner, msg string
		timeout    int
		reviewers  []string
	}{
		{"deploy-bot", "Deploy api v1.3?\nreplicas: 3", 3600, nil},
		{"deploy-bot", "Rotate the signing key", 600, []string{"group:ops"}},
		{"deploy-bot", "Restart the queue", 900, nil},
		{"ci-bot", "Scale the workers to twelve replicas across both regions before the launch", 1200, []string{"bob@example.com", "carol@example.com"}},
	} {
		e.create(r.owner, elicitation.Input{Message: r.msg, TimeoutSeconds: r.timeout, Reviewers: r.reviewers})
	}
	if _, err := e.svc.Create(context.Background(), "ci-bot", elicitation.KindSelection, elicitation.Input{Message: "Pick a region", Options: raws(`{"id":"eu"}`, `{"id":"us"}`), TimeoutSeconds: 2400}); err != nil {
		t.Fatal(err)
	}
	// Eve's inbox is two pages (the requests added for it name only her:
	// bob's counts and screenshots stay as they are); its flow runs first,
	// before the other flows decide two of the requests she may decide too.
	for i := range elicitation.DefaultInboxRows + 1 {
		e.create("batch-bot", elicitation.Input{Message: fmt.Sprintf("Batch step %d", i), TimeoutSeconds: 3000 + i, Reviewers: []string{"eve@example.com"}})
	}
	eves, err := e.svc.ReviewerInbox(context.Background(), reviewers["eve"], elicitation.InboxFilter{})
	if err != nil || eves.Total <= elicitation.DefaultInboxRows {
		t.Fatalf("eve's inbox holds %d, %v: want more than one page", eves.Total, err)
	}
	// docs/review-page.md's screenshots, rewritten only under -update.
	shots := t.TempDir()
	if *update {
		shots, _ = filepath.Abs(filepath.Join("..", "..", "docs", "screenshots"))
	}
	runBrowser(t, e, []flow{
		{"name": "inbox-pages-390-light", "do": "inboxPages", "viewport": "p390", "scheme": "light", "as": "eve", "total": eves.Total},
		{"name": "screenshot inbox", "do": "screenshot", "viewport": "p390", "url": "/__test/signin?as=bob", "file": "review-inbox-phone.png"},
		{"name": "screenshot inbox dark", "do": "screenshot", "viewport": "p390", "scheme": "dark", "url": "/__test/signin?as=bob", "file": "review-inbox-phone-dark.png"},
		{"name": "inbox-320-dark", "do": "inbox", "viewport": "p320", "scheme": "dark", "as": "bob", "title": "Inbox (5): requests waiting for you", "agent": "deploy-bot", "agentRows": 3},
		{"name": "inbox-390-light", "do": "inbox", "viewport": "p390", "scheme": "light", "as": "bob", "title": "Inbox (4): requests waiting for you", "agent": "deploy-bot", "agentRows": 2},
		{"name": "inbox-no-sign-in-320-dark", "do": "axe", "viewport": "p320", "scheme": "dark", "url": "/review/"},
	}, shots)
	if l, err := e.svc.ReviewerInbox(context.Background(), reviewers["bob"], elicitation.InboxFilter{}); err != nil || l.All != 3 {
		t.Errorf("after the two approvals in Chromium bob's inbox holds %d, %v; want 3", l.All, err)
	}
}

// TestInboxHeadlines: a row shows its headline's text without Markdown's
// markup, raw HTML as written (escaped), and a headline without text as
// written.
func TestInboxHeadlines(t *testing.T) {
	e := newSignedInEnv(t)
	for i, msg := range []string{"Rotate the **key** for `api`", "See [the runbook](https://example.com/r) first", "Two of us <b>must</b> agree", "---", "# Release 2.0"} {
		e.create("agent", elicitation.Input{Message: msg, TimeoutSeconds: 600 + i})
	}
	var got []string
	for _, m := range rowRE.FindAllStringSubmatch(e.getAs("bob", "/review/").Body, -1) {
		got = append(got, m[2])
	}
	want := []string{"Rotate the key for api", "See the runbook first", "Two of us &lt;b&gt;must&lt;/b&gt; agree", "---", "Release 2.0"}
	if !slices.Equal(got, want) {
		t.Errorf("headlines %q, want %q", got, want)
	}
}

// TestPageLinksToInbox: with a signed-in reviewer, the request's page and
// the page after the decision link back to the inbox, relative to the
// address (the keyless one and the key's); without sign-in, no link.
func TestPageLinksToInbox(t *testing.T) {
	e := newSignedInEnv(t)
	c := e.create("agent", elicitation.Input{Message: "m"})
	link := func(body string) string {
		m := regexp.MustCompile(`<p class="to-inbox"><a href="([^"]*)">Your inbox</a></p>`).FindStringSubmatch(body)
		if m == nil {
			return ""
		}
		return m[1]
	}
	if got := link(e.getAs("bob", c.Path()).Body); got != "../" {
		t.Errorf("the key's page links to %q, want ../", got)
	}
	if got := link(e.getAs("bob", review.Path(c.ID, elicitation.NoKey)).Body); got != "./" {
		t.Errorf("the keyless page links to %q, want ./", got)
	}
	if r := e.decideAs("bob", c, "declined"); r.Status != http.StatusOK || link(r.Body) != "./" {
		t.Errorf("after the decision: %d, link %q", r.Status, link(r.Body))
	}
	plain := newEnv(t)
	pc := plain.approval(elicitation.Input{Message: "m", Context: json.RawMessage(`1`)})
	if got := link(plain.get(pc.Path()).Body); got != "" {
		t.Errorf("without sign-in the page links to %q", got)
	}
}
