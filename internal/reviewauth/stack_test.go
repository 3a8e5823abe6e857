package reviewauth_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/boltstore"
	"github.com/mcp-elicitation/elicitation/internal/dynamostore/dynamotest"
	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/pagetoken"
	"github.com/mcp-elicitation/elicitation/internal/review"
	"github.com/mcp-elicitation/elicitation/internal/reviewauth"
	"github.com/mcp-elicitation/elicitation/internal/reviewauth/oidctest"
	"github.com/mcp-elicitation/elicitation/internal/testclock"
)

func TestMain(m *testing.M) { os.Exit(dynamotest.Main(m)) }

// instance is one review server: its own Service and handlers over the
// shared store's data, as one process (or one Lambda function) is.
type instance struct {
	srv  *httptest.Server
	svc  *elicitation.Service
	auth *reviewauth.Auth
}

// stack is a real OpenID provider and n review servers behind sign-in.
type stack struct {
	provider  *oidctest.Provider
	clock     *testclock.Clock
	keys      *pagetoken.Keyring
	instances []*instance
}

// newStack starts the provider and one review server per store handle
// (all on the same data), with the policy given.
func newStack(t *testing.T, pol elicitation.ReviewerPolicy, stores ...elicitation.Store) *stack {
	t.Helper()
	return newStackWith(t, pol, func(*reviewauth.Config) {}, stores...)
}

// newStackWith is newStack with each instance's sign-in configured by
// configure last.
func newStackWith(t *testing.T, pol elicitation.ReviewerPolicy, configure func(*reviewauth.Config), stores ...elicitation.Store) *stack {
	t.Helper()
	s := &stack{clock: testclock.New(time.Now().UTC().Truncate(time.Second))}
	var err error
	if s.keys, err = pagetoken.ParseKeyring("k1:" + pagetoken.GenerateSecret()); err != nil {
		t.Fatal(err)
	}
	var lns []net.Listener
	var callbacks []string
	for range stores {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns = append(lns, ln)
		callbacks = append(callbacks, "http://"+ln.Addr().String()+reviewauth.CallbackPath)
	}
	s.provider = oidctest.Start(t, callbacks...)
	for i, st := range stores {
		svc := elicitation.NewService(elicitation.Config{Store: st, Now: s.clock.Now, SignIn: true, Policy: pol})
		base := "http://" + lns[i].Addr().String()
		pages := review.New(review.Options{Service: svc, Tokens: s.keys, Now: s.clock.Now})
		cfg := reviewauth.Config{
			Pages:  pages,
			Issuer: s.provider.Issuer, ClientID: oidctest.ClientID,
			ClientSecret: func(context.Context) (string, error) { return oidctest.ClientSecret, nil },
			Keys:         s.keys.Derive("review session"),
			Base:         func(*http.Request) string { return base },
			Now:          s.clock.Now,
		}
		configure(&cfg)
		auth, err := reviewauth.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		mux := http.NewServeMux()
		pages.Routes(mux)
		srv := httptest.NewUnstartedServer(auth.Wrap(mux))
		_ = srv.Listener.Close()
		srv.Listener = lns[i]
		srv.Start()
		t.Cleanup(srv.Close)
		s.instances = append(s.instances, &instance{srv: srv, svc: svc, auth: auth})
	}
	return s
}

func boltStore(t *testing.T) elicitation.Store {
	t.Helper()
	st, err := boltstore.Open(filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// create makes a pending selection owned by owner and returns its review
// URL on instance i.
func (s *stack) create(t *testing.T, i int, owner string, in elicitation.Input) (id, pageURL string) {
	t.Helper()
	if in.Message == "" {
		in.Message = "Which region?"
		in.Options = []json.RawMessage{json.RawMessage(`{"id":"eu","label":"Europe"}`), json.RawMessage(`{"id":"us","label":"Americas"}`)}
	}
	c, err := s.instances[i].svc.Create(context.Background(), owner, elicitation.KindSelection, in)
	if err != nil {
		t.Fatal(err)
	}
	return c.State.ID, s.instances[i].srv.URL + review.Path(c.State.ID, c.ReviewKey)
}

var tokenField = regexp.MustCompile(`name="token" value="([^"]+)"`)

// open signs in (if the browser has no session) and returns the page.
func open(t *testing.T, b *http.Client, pageURL, user string) (*http.Response, string) {
	t.Helper()
	resp, body, err := oidctest.SignIn(context.Background(), b, pageURL, user)
	if err != nil {
		t.Fatalf("open %s as %s: %v", pageURL, user, err)
	}
	return resp, body
}

// approve opens the page as user and approves option pick; it returns the
// submission's response.
func approve(t *testing.T, b *http.Client, pageURL, user, pick string) (int, string) {
	t.Helper()
	resp, body := open(t, b, pageURL, user)
	m := tokenField.FindStringSubmatch(body)
	if resp.StatusCode != http.StatusOK || m == nil {
		t.Fatalf("page for %s: %d, no form\n%.600s", user, resp.StatusCode, body)
	}
	return post(t, b, pageURL, url.Values{"token": {m[1]}, "decision": {"submitted"}, "option": {pick}})
}

func post(t *testing.T, b *http.Client, pageURL string, form url.Values) (int, string) {
	t.Helper()
	resp, err := b.PostForm(pageURL, form)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var sb strings.Builder
	_, _ = fmt.Fprint(&sb, readAll(resp))
	return resp.StatusCode, sb.String()
}

func readAll(resp *http.Response) string {
	b := make([]byte, 0, 4096)
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		b = append(b, buf[:n]...)
		if err != nil {
			return string(b)
		}
	}
}

func state(t *testing.T, svc *elicitation.Service, owner, id string) elicitation.State {
	t.Helper()
	st, err := svc.Status(context.Background(), owner, id)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func trail(t *testing.T, svc *elicitation.Service, id string) []string {
	t.Helper()
	tr, err := svc.OperatorAudit(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range tr.Entries {
		out = append(out, string(e.Action)+" "+e.Principal+" "+e.Detail)
	}
	return out
}

func reseal(t *testing.T, s *stack, state, v string) string {
	t.Helper()
	out, err := reviewauth.Reseal(s.instances[0].auth, state, v)
	if err != nil {
		t.Fatalf("reseal the sign-in cookie: %v", err)
	}
	return out
}
