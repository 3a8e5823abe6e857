package authserver_test

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/oauth2"

	"github.com/mcp-elicitation/elicitation/internal/grant"
	"github.com/mcp-elicitation/elicitation/internal/grant/granttest"
)

// The store failing under the consent page (reading the sign-in, reading
// its client, writing the person's answer) is a 500 page saying the
// server could not read the sign-in and to try again, not "This sign-in
// has ended" or "Unknown application", which send the person to start
// over for nothing; the store's own words stay in the server's log. Once
// the store is back, the same page works.
func TestConsentStoreFailure(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		method string
		write  string // the store call that fails; "" the client lookup
	}{
		{"reading the sign-in for the page", http.MethodGet, "get"},
		{"reading the sign-in for the answer", http.MethodPost, "get"},
		{"reading the client for the page", http.MethodGet, ""},
		{"reading the client for the answer", http.MethodPost, ""},
		{"writing the answer", http.MethodPost, "put"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			store := &hookedStore{Store: &granttest.Memory{}}
			h := startWith(t, store)
			resp := h.do(t, http.MethodGet, h.oauth2().AuthCodeURL("s", oauth2.S256ChallengeOption(oauth2.GenerateVerifier())), "alice", nil)
			consent := resp.Header.Get("Location")
			resp = h.do(t, http.MethodGet, consent, "alice", nil)
			page := body(resp)
			form := url.Values{"decision": {"allow"}}
			for _, m := range hidden.FindAllStringSubmatch(page, -1) {
				form.Set(m[1], m[2])
			}
			if resp.StatusCode != http.StatusOK || form.Get("t") == "" {
				t.Fatalf("consent page: %d %s", resp.StatusCode, page)
			}
			fail := func(on bool) {
				h.clientsDown.Store(on && tc.write == "")
				store.set(func(write string, r grant.Record) error {
					if on && write == tc.write && r.Kind == "login" {
						return errors.New(storeText)
					}
					return nil
				})
			}
			send := func() *http.Response {
				if tc.method == http.MethodPost {
					return h.do(t, http.MethodPost, consent, "alice", form)
				}
				return h.do(t, http.MethodGet, consent, "alice", nil)
			}
			fail(true)
			resp = send()
			b := body(resp)
			if resp.StatusCode != http.StatusInternalServerError || !strings.Contains(b, "could not read this sign-in") || !strings.Contains(b, "try again") ||
				strings.Contains(b, "has ended") || strings.Contains(b, "Unknown application") || strings.Contains(b, "arn:aws") || strings.Contains(b, "10.1.2.3") {
				t.Fatalf("%d %s, want 500 saying the server could not read the sign-in, and nothing of the store", resp.StatusCode, b)
			}
			fail(false)
			resp = send()
			b = body(resp)
			if want := map[string]int{http.MethodGet: http.StatusOK, http.MethodPost: http.StatusSeeOther}[tc.method]; resp.StatusCode != want {
				t.Fatalf("once the store is back: %d %s, want %d", resp.StatusCode, b, want)
			}
		})
	}
}

// A consent answer that is neither allow nor deny (no decision, as a
// form.submit() without the button sends, or another word) decides
// nothing: a 400 page says so, and the same page still allows (or
// denies) afterwards.
func TestConsentAnswerMalformed(t *testing.T) {
	t.Parallel()
	h := start(t)
	for _, decision := range []string{"", "yes", "Allow"} {
		t.Run(decision, func(t *testing.T) {
			t.Parallel()
			resp := h.do(t, http.MethodGet, h.oauth2().AuthCodeURL("s", oauth2.S256ChallengeOption(oauth2.GenerateVerifier())), "alice", nil)
			consent := resp.Header.Get("Location")
			page := body(h.do(t, http.MethodGet, consent, "alice", nil))
			form := url.Values{}
			if decision != "" {
				form.Set("decision", decision)
			}
			for _, m := range hidden.FindAllStringSubmatch(page, -1) {
				form.Set(m[1], m[2])
			}
			resp = h.do(t, http.MethodPost, consent, "alice", form)
			b := body(resp)
			if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Location") != "" || !strings.Contains(b, "nothing was changed") {
				t.Fatalf("decision %q: %d %s %s, want 400 deciding nothing", decision, resp.StatusCode, resp.Header.Get("Location"), b)
			}
			form.Set("decision", "allow")
			resp = h.do(t, http.MethodPost, consent, "alice", form)
			loc, _ := url.Parse(resp.Header.Get("Location"))
			if resp.StatusCode != http.StatusSeeOther || loc == nil || loc.Query().Get("code") == "" {
				t.Fatalf("allow after a malformed answer: %d %s", resp.StatusCode, resp.Header.Get("Location"))
			}
		})
	}
}
