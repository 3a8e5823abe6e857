package review

import (
	"errors"
	"net/http/httptest"
	"testing"
)

// TestCheckOrigin: the one origin rule, case by case (the real browser's
// headers are checked in internal/reviewauth's Chromium test).
func TestCheckOrigin(t *testing.T) {
	trusted := []string{Origin("https://Review.Example.com/base/")}
	for _, tc := range []struct {
		name, method, site, origin string
		ok                         bool
		// target is the request's URL (an https one arrives over TLS),
		// proto its X-Forwarded-Proto; default http://127.0.0.1:8080.
		target, proto string
	}{
		{"GET from anywhere", "GET", "cross-site", "https://evil.example", true, "", ""},
		{"same-origin", "POST", "same-origin", "null", true, "", ""},
		{"the reviewer's own navigation", "POST", "none", "", true, "", ""},
		{"another port", "POST", "same-site", "http://127.0.0.1:9", false, "", ""},
		{"another site", "POST", "cross-site", "https://evil.example", false, "", ""},
		{"an unknown Sec-Fetch-Site", "POST", "sideways", "", false, "", ""},
		{"old browser, this host", "POST", "", "http://127.0.0.1:8080", true, "", ""},
		{"old browser, the public URL behind a tunnel", "POST", "", "https://review.example.com", true, "", ""},
		{"old browser, another port", "POST", "", "http://127.0.0.1:9", false, "", ""},
		{"old browser, a sibling subdomain", "POST", "", "https://evil.review.example.com", false, "", ""},
		{"old browser, garbage", "POST", "", "%%", false, "", ""},
		{"old browser, null (an opaque origin)", "POST", "", "null", false, "", ""},
		{"no headers", "POST", "", "", true, "", ""},
		// The request's own origin is its scheme as well as its host: a
		// plain-http page on port 80 of an https host is another port.
		{"old browser, this https host", "POST", "", "https://review.example.org", true, "https://review.example.org/review/a/b", ""},
		{"old browser, port 80 of this https host", "POST", "", "http://review.example.org", false, "https://review.example.org/review/a/b", ""},
		{"old browser, behind a proxy ending TLS", "POST", "", "https://review.example.org", true, "http://review.example.org/review/a/b", "https"},
		{"old browser, port 80 behind a proxy ending TLS", "POST", "", "http://review.example.org", false, "http://review.example.org/review/a/b", "https"},
		{"old browser, https page to a plain-http host", "POST", "", "https://127.0.0.1:8080", false, "", ""},
	} {
		target := tc.target
		if target == "" {
			target = "http://127.0.0.1:8080/review/a/b"
		}
		r := httptest.NewRequest(tc.method, target, nil)
		if tc.proto != "" {
			r.Header.Set("X-Forwarded-Proto", tc.proto)
		}
		if tc.site != "" {
			r.Header.Set("Sec-Fetch-Site", tc.site)
		}
		if tc.origin != "" {
			r.Header.Set("Origin", tc.origin)
		}
		err := CheckOrigin(r, trusted)
		if (err == nil) != tc.ok || (err != nil && !errors.Is(err, ErrCrossOrigin)) {
			t.Errorf("%s: %v, want ok %v", tc.name, err, tc.ok)
		}
	}
	if o := Origin("not a url"); o != "" {
		t.Errorf("Origin of a relative URL = %q", o)
	}
}
