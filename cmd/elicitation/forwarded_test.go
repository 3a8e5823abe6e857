package main

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/mcp-elicitation/elicitation/internal/reviewauth"
	"github.com/mcp-elicitation/elicitation/internal/reviewauth/oidctest"
	"github.com/mcp-elicitation/elicitation/internal/testenv"
)

// Behind a tunnel every caller comes from the tunnel client's address:
// with --trusted-proxies naming it, the OAuth server's per-source count
// (--oauth-requests-per-source 2) is each forwarded caller's own, a chain
// counts as its rightmost untrusted address (not a forged leftmost one),
// and without it a forged X-Forwarded-For changes nothing.
func TestTrustedProxiesSourceLimit(t *testing.T) {
	t.Parallel()
	type req struct {
		xff     string
		refused bool
	}
	for _, tc := range []struct {
		name    string
		trusted string
		reqs    []req
	}{
		{"trusted tunnel", "127.0.0.1/32,::1/128", []req{
			{"203.0.113.9", false}, {"203.0.113.9", false}, {"203.0.113.9", true}, // its 2
			{"203.0.113.10", false},                   // another caller is not blocked
			{"198.51.100.1, 203.0.113.9", true},       // a forged leftmost entry is not the source
			{"203.0.113.9, 198.51.100.7", false},      // the rightmost untrusted one is
			{"203.0.113.9, 198.51.100.7, ::1", false}, // past a trusted hop
			{"203.0.113.9, 198.51.100.7", true},
		}},
		{"untrusted peer", "10.0.0.0/8", []req{
			{"203.0.113.1", false}, {"203.0.113.2", false}, {"203.0.113.3", true}, // all 127.0.0.1's
		}},
		{"no proxies", "", []req{
			{"203.0.113.1", false}, {"203.0.113.2", false}, {"203.0.113.3", true},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			addr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
			p := oidctest.Start(t, "http://"+addr+reviewauth.CallbackPath)
			start(t, "--addr", addr, "--data-dir", t.TempDir(), "--oauth", "--oauth-requests-per-source", "2",
				"--trusted-proxies", tc.trusted,
				"--oidc-issuer", p.Issuer, "--oidc-client-id", oidctest.ClientID, "--oidc-client-secret", oidctest.ClientSecret)
			for i, r := range tc.reqs {
				// A client id of its own each time: only the source's count binds.
				form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"made-up"}, "client_id": {"c" + strconv.Itoa(i)}}
				hr, err := http.NewRequest(http.MethodPost, "http://"+addr+"/oauth/token", strings.NewReader(form.Encode()))
				if err != nil {
					t.Fatal(err)
				}
				hr.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				hr.Header.Set("X-Forwarded-For", r.xff)
				resp, err := http.DefaultClient.Do(hr)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if refused := resp.StatusCode == http.StatusTooManyRequests; refused != r.refused {
					t.Fatalf("token request %d, X-Forwarded-For %q: HTTP %d, want refused %v", i+1, r.xff, resp.StatusCode, r.refused)
				}
			}
		})
	}
}
