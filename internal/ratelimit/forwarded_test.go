package ratelimit_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mcp-elicitation/elicitation/internal/ratelimit"
)

// A request's source behind trusted proxies, over real HTTP from a
// loopback peer: X-Forwarded-For is read only from a trusted peer, from
// the right, past trusted hops, never left of the first untrusted one.
func TestProxiesForwarded(t *testing.T) {
	t.Parallel()
	echo := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, ratelimit.RemoteIP(r))
	})
	for _, tc := range []struct {
		name, trusted string
		xff           []string // header lines
		want          string
	}{
		{"trusted peer", "127.0.0.1/32,::1/128", []string{"203.0.113.9"}, "203.0.113.9"},
		{"trusted peer, single address", "127.0.0.1", []string{"203.0.113.9"}, "203.0.113.9"},
		{"untrusted peer's header ignored", "10.0.0.0/8", []string{"203.0.113.9"}, "127.0.0.1"},
		{"no proxies: header ignored", "", []string{"203.0.113.9"}, "127.0.0.1"},
		{"spoofed leftmost entry", "127.0.0.1/32", []string{"198.51.100.1, 203.0.113.9"}, "203.0.113.9"},
		{"past trusted hops", "127.0.0.1/32,10.0.0.0/8", []string{"198.51.100.1, 203.0.113.9, 10.1.2.3"}, "203.0.113.9"},
		{"several header lines", "127.0.0.1/32,10.0.0.0/8", []string{"198.51.100.1", "203.0.113.9, 10.1.2.3"}, "203.0.113.9"},
		{"malformed entry stops at the peer", "127.0.0.1/32", []string{"203.0.113.9, nonsense"}, "127.0.0.1"},
		{"malformed entry stops at the last trusted hop", "127.0.0.1/32,10.0.0.0/8", []string{"203.0.113.9, unknown, 10.1.2.3"}, "10.1.2.3"},
		{"empty entry", "127.0.0.1/32", []string{"203.0.113.9,"}, "127.0.0.1"},
		{"with a port", "127.0.0.1/32", []string{"203.0.113.9:4711"}, "203.0.113.9"},
		{"IPv6 by its /64", "127.0.0.1/32", []string{"[2001:db8:1:2:3::9]:4711"}, "2001:db8:1:2::/64"},
		{"no header", "127.0.0.1/32", nil, "127.0.0.1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var p ratelimit.Proxies
			if err := p.Set(tc.trusted); err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(p.Forwarded(echo))
			defer srv.Close()
			req, err := http.NewRequest(http.MethodGet, srv.URL, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range tc.xff {
				req.Header.Add("X-Forwarded-For", v)
			}
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			got, _ := io.ReadAll(resp.Body)
			if string(got) != tc.want {
				t.Errorf("X-Forwarded-For %q with trusted %q: source %q, want %q", tc.xff, tc.trusted, got, tc.want)
			}
		})
	}
}

// --trusted-proxies reads CIDRs and addresses, and names what it refuses.
func TestProxiesSet(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"127.0.0.1/32, ::1/128", "127.0.0.1/32,::1/128"},
		{"10.1.2.3/8,192.0.2.7", "10.0.0.0/8,192.0.2.7/32"},
		{"::ffff:127.0.0.1", "127.0.0.1/32"},
		{"", ""},
	} {
		var p ratelimit.Proxies
		if err := p.Set(tc.in); err != nil || p.String() != tc.want {
			t.Errorf("Set(%q): %q %v, want %q", tc.in, p.String(), err, tc.want)
		}
	}
	for _, bad := range []string{"localhost", "10.0.0.0/33", "127.0.0.1/32,x"} {
		var p ratelimit.Proxies
		if err := p.Set(bad); err == nil {
			t.Errorf("Set(%q) accepted as %q", bad, p.String())
		}
	}
}
