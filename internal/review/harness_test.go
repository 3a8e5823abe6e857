package review_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/boltstore"
	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/pagetoken"
	"github.com/mcp-elicitation/elicitation/internal/review"
	"github.com/mcp-elicitation/elicitation/internal/testclock"
)

// t0 is the tests' start time.
var t0 = time.Date(2026, 3, 14, 9, 26, 53, 0, time.UTC)

type env struct {
	t       testing.TB
	clock   *testclock.Clock
	store   *boltstore.Store
	svc     *elicitation.Service
	keys    *pagetoken.Keyring
	handler *review.Handler
	srv     *httptest.Server
	mux     *http.ServeMux
	renders atomic.Int64
}

const testKeys = "k1:MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=,k0:ZmVkY2JhOTg3NjU0MzIxMGZlZGNiYTk4NzY1NDMyMTA="

// testChecker is the template checker with the default limits, which
// count work and so hold on a loaded machine under -race as anywhere.
func testChecker() *review.TemplateChecker { return review.NewTemplateChecker() }

func newEnv(t testing.TB, opts ...func(*review.Options)) *env {
	t.Helper()
	return newEnvWith(t, testChecker(), opts...)
}

// newEnvWith is newEnv with the template checker given: the default one
// where a test holds the wall-clock bounds.
func newEnvWith(t testing.TB, checker *review.TemplateChecker, opts ...func(*review.Options)) *env {
	t.Helper()
	e := &env{t: t, clock: testclock.New(t0)}
	st, err := boltstore.Open(filepath.Join(t.TempDir(), "store.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	e.store = st
	e.svc = elicitation.NewService(elicitation.Config{Store: st, Now: e.clock.Now, Templates: checker})
	e.keys, err = pagetoken.ParseKeyring(testKeys)
	if err != nil {
		t.Fatal(err)
	}
	o := review.Options{
		Service: e.svc, Tokens: e.keys, Now: e.clock.Now, Templates: checker,
		NewRenderID: func() string { return fmt.Sprintf("render-%04d", e.renders.Add(1)) },
	}
	for _, f := range opts {
		f(&o)
	}
	e.handler = review.New(o)
	e.mux = http.NewServeMux()
	e.handler.Routes(e.mux)
	e.srv = httptest.NewServer(e.mux)
	t.Cleanup(e.srv.Close)
	return e
}

// created is a request made through the Service.
type created struct {
	ID, Key string
}

func (c created) Path() string { return review.Path(c.ID, c.Key) }

func (e *env) selection(in elicitation.Input) created {
	e.t.Helper()
	c, err := e.svc.Create(context.Background(), "agent", elicitation.KindSelection, in)
	if err != nil {
		e.t.Fatalf("creating a selection: %v", err)
	}
	return created{c.State.ID, c.ReviewKey}
}

func (e *env) approval(in elicitation.Input) created {
	e.t.Helper()
	c, err := e.svc.Create(context.Background(), "agent", elicitation.KindApproval, in)
	if err != nil {
		e.t.Fatalf("creating an approval: %v", err)
	}
	return created{c.State.ID, c.ReviewKey}
}

func options(n int) []json.RawMessage {
	out := make([]json.RawMessage, n)
	for i := range out {
		out[i] = json.RawMessage(fmt.Sprintf(`{"id":"opt-%d","label":"Option %d","domain":"example-%d.org","score":%d}`, i, i, i, i*7%100))
	}
	return out
}

func raws(objs ...string) []json.RawMessage {
	out := make([]json.RawMessage, len(objs))
	for i, o := range objs {
		out[i] = json.RawMessage(o)
	}
	return out
}

type response struct {
	Status int
	Header http.Header
	Body   string
}

func (e *env) get(path string) response {
	e.t.Helper()
	res, err := http.Get(e.srv.URL + path)
	if err != nil {
		e.t.Fatal(err)
	}
	return read(e.t, res)
}

func (e *env) post(path string, form url.Values) response {
	e.t.Helper()
	res, err := http.PostForm(e.srv.URL+path, form)
	if err != nil {
		e.t.Fatal(err)
	}
	return read(e.t, res)
}

func (e *env) postBody(path, contentType string, body io.Reader) response {
	e.t.Helper()
	res, err := http.Post(e.srv.URL+path, contentType, body)
	if err != nil {
		e.t.Fatal(err)
	}
	return read(e.t, res)
}

func read(t testing.TB, res *http.Response) response {
	t.Helper()
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{res.StatusCode, res.Header, string(b)}
}

var tokenRE = regexp.MustCompile(`name="token" value="([^"]+)"`)

// token renders the page and returns its page token.
func (e *env) token(c created) string {
	e.t.Helper()
	r := e.get(c.Path())
	m := tokenRE.FindStringSubmatch(r.Body)
	if r.Status != http.StatusOK || m == nil {
		e.t.Fatalf("GET %s: %d, no token in page", c.Path(), r.Status)
	}
	return htmlUnescape(m[1])
}

func htmlUnescape(s string) string {
	return strings.NewReplacer("&#43;", "+", "&#34;", `"`, "&amp;", "&", "&#39;", "'", "&lt;", "<", "&gt;", ">").Replace(s)
}

// state reads a request's stored state as its owner sees it.
func (e *env) state(c created) elicitation.State {
	e.t.Helper()
	st, err := e.svc.Status(context.Background(), "agent", c.ID)
	if err != nil {
		e.t.Fatal(err)
	}
	return st
}

// audit reads a request's audit trail.
func (e *env) audit(c created) elicitation.AuditTrail {
	e.t.Helper()
	tr, err := e.svc.OperatorAudit(context.Background(), c.ID)
	if err != nil {
		e.t.Fatal(err)
	}
	return tr
}

// lastRefusal is the detail of the last submission_refused entry.
func lastRefusal(tr elicitation.AuditTrail) string {
	for i := len(tr.Entries) - 1; i >= 0; i-- {
		if tr.Entries[i].Action == elicitation.ActionSubmissionRefused {
			return tr.Entries[i].Detail
		}
	}
	return ""
}

func doReq(h http.Handler, method, path, form string) response {
	req := httptest.NewRequest(method, path, strings.NewReader(form))
	if form != "" {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return response{w.Code, w.Header(), w.Body.String()}
}
