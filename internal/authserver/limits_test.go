package authserver_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/mcp-elicitation/elicitation/internal/authserver"
	"github.com/mcp-elicitation/elicitation/internal/grant/granttest"
	"github.com/mcp-elicitation/elicitation/internal/ratelimit"
)

// The per-source and per-client counts of the flood tests' servers.
const (
	perSource = 5
	perClient = 8
)

// A flood of token, revocation or authorization requests, from one
// source or naming one client (in the form or in HTTP Basic), is refused
// past its count with 429 temporarily_unavailable and Retry-After
// (which an OAuth client reads as "try later", keeping its tokens; never
// invalid_grant or invalid_client, which make it drop them); meanwhile
// another source redeems its code for tokens and refreshes them, and the
// flooded client's own requests from elsewhere are refused only for that
// client, and one source's flood does not spend a client's count (it is
// higher), so the client it names still gets through from elsewhere.
func TestOAuthRequestFlood(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, path string
		source     func(i int) string // of the i-th request of the flood
		basic      bool               // the client id in HTTP Basic, not the form
		limit      int                // requests let through
	}{
		{"token, one source", authserver.TokenPath, func(int) string { return "flood" }, false, perSource},
		{"token, one client from many sources", authserver.TokenPath, func(i int) string { return "flood-" + strconv.Itoa(i) }, false, perClient},
		{"token, one client in Basic from many sources", authserver.TokenPath, func(i int) string { return "flood-" + strconv.Itoa(i) }, true, perClient},
		{"revocation, one source", authserver.RevokePath, func(int) string { return "flood" }, false, perSource},
		{"revocation, one client from many sources", authserver.RevokePath, func(i int) string { return "flood-" + strconv.Itoa(i) }, true, perClient},
		{"authorization, one client from many sources", authserver.AuthorizePath, func(i int) string { return "flood-" + strconv.Itoa(i) }, false, perClient},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := startEdit(t, &granttest.Memory{}, func(c *authserver.Config) {
				c.Requests = ratelimit.New(ratelimit.Rate{Count: perSource, Per: time.Hour}, ratelimit.Rate{Count: 1000, Per: time.Hour}, 100).
					PerClient(ratelimit.Rate{Count: perClient, Per: time.Hour})
			})
			flood := func(i int) *http.Response {
				return h.send(t, tc.path, tc.source(i), "other", tc.basic)
			}
			for i := range tc.limit {
				if resp := flood(i); resp.StatusCode == http.StatusTooManyRequests {
					t.Fatalf("request %d of the flood refused: %s", i, body(resp))
				}
			}
			resp := flood(tc.limit)
			var e struct{ Error string }
			_ = json.Unmarshal([]byte(body(resp)), &e)
			if resp.StatusCode != http.StatusTooManyRequests || e.Error != "temporarily_unavailable" || resp.Header.Get("Retry-After") == "" {
				t.Fatalf("request %d of the flood: %d %q Retry-After %q, want 429 temporarily_unavailable with Retry-After",
					tc.limit+1, resp.StatusCode, e.Error, resp.Header.Get("Retry-After"))
			}
			resp = h.send(t, tc.path, "elsewhere", "other", tc.basic)
			if refused := resp.StatusCode == http.StatusTooManyRequests; refused != (tc.limit == perClient) {
				t.Fatalf("the flooded client from elsewhere: %d %s (refused only when the client's own count is spent)", resp.StatusCode, body(resp))
			}
			// Another source, another client: the whole flow works.
			verifier := oauth2.GenerateVerifier()
			back := h.authorize(t, "alice", verifier)
			a := h.tokenFrom(t, "elsewhere", url.Values{"grant_type": {"authorization_code"}, "code": {back.Query().Get("code")},
				"code_verifier": {verifier}, "redirect_uri": {"http://127.0.0.1:4567/cb"}})
			if a.status != http.StatusOK || a.Token == "" {
				t.Fatalf("another source's redemption during the flood: %d %s", a.status, a.body)
			}
			if a = h.tokenFrom(t, "elsewhere", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {a.Token}}); a.status != http.StatusOK {
				t.Fatalf("another source's refresh during the flood: %d %s", a.status, a.body)
			}
		})
	}
}

// send is one request of a flood to path from source, naming client.
func (h *harness) send(t *testing.T, path, source, client string, basic bool) *http.Response {
	t.Helper()
	var req *http.Request
	if path == authserver.AuthorizePath {
		c := h.oauth2()
		c.ClientID = client
		req, _ = http.NewRequest(http.MethodGet, c.AuthCodeURL("s", oauth2.S256ChallengeOption(oauth2.GenerateVerifier())), nil)
	} else {
		form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"made-up"}, "token": {"made-up"}}
		if !basic {
			form.Set("client_id", client)
		}
		req, _ = http.NewRequest(http.MethodPost, h.url+path, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if basic {
			req.SetBasicAuth(url.QueryEscape(client), "")
		}
	}
	req.Header.Set("X-Test-Source", source)
	resp, err := noFollow.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// tokenFrom is token, sent from source.
func (h *harness) tokenFrom(t *testing.T, source string, form url.Values) tokenAnswer {
	t.Helper()
	form.Set("client_id", h.client.ID)
	req, _ := http.NewRequest(http.MethodPost, h.url+authserver.TokenPath, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Test-Source", source)
	resp, err := noFollow.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	a := tokenAnswer{status: resp.StatusCode, body: body(resp)}
	_ = json.Unmarshal([]byte(a.body), &a)
	return a
}
