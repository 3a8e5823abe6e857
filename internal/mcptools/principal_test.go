package mcptools_test

import (
	"net/http"
	"testing"

	"github.com/mcp-elicitation/elicitation/internal/mcptools"
)

// TestPrincipalAddress: a keyless caller is its address, an IPv6 one its
// /64, so one host cannot count as many principals by choosing its source
// address within the prefix it is given.
func TestPrincipalAddress(t *testing.T) {
	t.Parallel()
	req := func(addr string) *http.Request { return &http.Request{RemoteAddr: addr} }
	same := [][2]string{
		{"[2001:db8:1:2::1]:4000", "[2001:db8:1:2:ffff::9]:5000"},
		{"192.0.2.7:4000", "192.0.2.7:5000"},
		{"[::ffff:192.0.2.7]:4000", "192.0.2.7:5000"},
	}
	for _, c := range same {
		if a, b := mcptools.Principal(req(c[0])), mcptools.Principal(req(c[1])); a != b {
			t.Errorf("%s and %s: principals %q and %q, want one", c[0], c[1], a, b)
		}
	}
	differ := [][2]string{
		{"[2001:db8:1:2::1]:4000", "[2001:db8:1:3::1]:4000"},
		{"192.0.2.7:4000", "192.0.2.8:4000"},
	}
	for _, c := range differ {
		if a, b := mcptools.Principal(req(c[0])), mcptools.Principal(req(c[1])); a == b {
			t.Errorf("%s and %s: one principal %q, want two", c[0], c[1], a)
		}
	}
}
