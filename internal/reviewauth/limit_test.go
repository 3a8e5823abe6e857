package reviewauth_test

import (
	"context"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/ratelimit"
	"github.com/mcp-elicitation/elicitation/internal/reviewauth"
)

// tokenCalls counts the requests the sign-in makes to the issuer's token
// endpoint.
type tokenCalls struct {
	next http.RoundTripper
	n    atomic.Int32
}

func (c *tokenCalls) RoundTrip(req *http.Request) (*http.Response, error) {
	if strings.HasSuffix(req.URL.Path, "/token") {
		c.n.Add(1)
	}
	return c.next.RoundTrip(req)
}

// fromAddress is an HTTP client whose connections come from the loopback
// address ip, without a cookie jar or redirects.
func fromAddress(ip string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
	return &http.Client{
		Transport:     &http.Transport{DialContext: d.DialContext},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Timeout:       30 * time.Second,
	}
}

// TestCallbackExchangesBounded: a valid state costs an attacker one GET
// (any review page without a session starts a sign-in) and its sealed
// cookie opens for ten minutes, so replaying the callback with made-up
// codes would have the server call the issuer's token endpoint without
// bound, spending the client's limits there. The exchanges are bounded
// per source address and in all: past either, 429 "Too many sign-ins"
// with Retry-After, and the issuer is not called.
func TestCallbackExchangesBounded(t *testing.T) {
	t.Parallel()
	type callback struct {
		from    string // the loopback address it comes from
		refused bool
	}
	for _, tc := range []struct {
		name      string
		each, all int
		callbacks []callback
	}{
		{name: "per source", each: 2, all: 100, callbacks: []callback{{"127.0.0.1", false}, {"127.0.0.1", false}, {"127.0.0.1", true}, {"127.0.0.2", false}}},
		{name: "in all", each: 100, all: 2, callbacks: []callback{{"127.0.0.1", false}, {"127.0.0.2", false}, {"127.0.0.3", true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			calls := &tokenCalls{next: http.DefaultTransport}
			s := newStackWith(t, elicitation.ReviewerPolicy{}, func(c *reviewauth.Config) {
				c.HTTPClient = &http.Client{Transport: calls, Timeout: 5 * time.Second}
				c.Exchanges = ratelimit.New(ratelimit.Rate{Count: tc.each, Per: time.Hour}, ratelimit.Rate{Count: tc.all, Per: time.Hour}, 100)
			}, boltStore(t))
			_, page := s.create(t, 0, "agent@example.com", elicitation.Input{})
			base := s.instances[0].srv.URL
			// One sign-in started: its state and its cookie.
			resp, err := fromAddress("127.0.0.1").Get(page)
			if err != nil {
				t.Fatal(err)
			}
			_ = resp.Body.Close()
			loc, err := url.Parse(resp.Header.Get("Location"))
			if err != nil || resp.StatusCode != http.StatusFound {
				t.Fatalf("the page without a session: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
			}
			state := loc.Query().Get("state")
			var cookie *http.Cookie
			for _, c := range resp.Cookies() {
				if c.Name == reviewauth.LoginCookiePrefix+state {
					cookie = c
				}
			}
			if cookie == nil {
				t.Fatal("no sign-in cookie")
			}
			for i, cb := range tc.callbacks {
				before := calls.n.Load()
				req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet,
					base+reviewauth.CallbackPath+"?"+url.Values{"state": {state}, "code": {"made-up"}}.Encode(), nil)
				req.AddCookie(&http.Cookie{Name: cookie.Name, Value: cookie.Value})
				resp, err := fromAddress(cb.from).Do(req)
				if err != nil {
					t.Fatal(err)
				}
				body := readAll(resp)
				_ = resp.Body.Close()
				want, says := http.StatusBadRequest, "Sign-in did not complete"
				if cb.refused {
					want, says = http.StatusTooManyRequests, "Too many sign-ins"
					if resp.Header.Get("Retry-After") == "" {
						t.Errorf("callback %d from %s: 429 without Retry-After", i, cb.from)
					}
				}
				if resp.StatusCode != want || !strings.Contains(body, says) {
					t.Errorf("callback %d from %s: %d, want %d saying %q\n%.400s", i, cb.from, resp.StatusCode, want, says, body)
				}
				if called := calls.n.Load() > before; called == cb.refused {
					t.Errorf("callback %d from %s: the token endpoint called %t, want %t", i, cb.from, called, !cb.refused)
				}
			}
		})
	}
}
