package review

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// ErrCrossOrigin is CheckOrigin's refusal.
var ErrCrossOrigin = errors.New("a state-changing request from another origin")

// CheckOrigin is the one rule of where a state-changing request to the
// review routes may come from: a page of this origin (the request's own
// host, or one of trusted, the public URL's origin), never another site,
// another port of this host or a sibling subdomain. It decides for the
// local server and for the submit Lambda function alike (both serve
// POSTs through the Handler). GET, HEAD and OPTIONS change nothing and
// always pass.
//
// The browser's word decides, in this order:
//
//   - Sec-Fetch-Site, sent by every current browser to https and loopback
//     origins (all that reviewer sign-in allows): "same-origin" passes, as
//     does "none" (the reviewer's own navigation); "same-site" (another
//     port, a sibling subdomain) and "cross-site" are refused.
//   - Without it (a browser from before 2023, or a plain-http origin that
//     is not loopback), Origin: a serialized origin must be this origin:
//     one of trusted, or the request's own (RequestOrigin: its scheme as
//     well as its Host, so that a plain-http page on port 80 of an https
//     host, whose Origin names the same host, is another origin).
//     "Origin: null" is refused: the review pages' Referrer-Policy is
//     same-origin, under which a browser sends the page's own form with
//     its real origin, so null comes only from an opaque origin such as a
//     hostile sandboxed frame or a data: URL.
//   - Neither header: a client that is not a browser (curl, a script),
//     which carries no reviewer's cookie, or a browser from before 2020.
//     It passes; what holds then is the page token, bound to the request
//     and to the signed-in reviewer it was rendered for, which another
//     site cannot read, and the SameSite=Lax session cookie, which no
//     browser sends on another site's POST.
func CheckOrigin(r *http.Request, trusted []string) error {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return nil
	}
	switch site := r.Header.Get("Sec-Fetch-Site"); site {
	case "same-origin", "none":
		return nil
	case "":
	default:
		return fmt.Errorf("%w: Sec-Fetch-Site is %.32q", ErrCrossOrigin, site)
	}
	origin := r.Header.Get("Origin")
	if origin == "" || slices.Contains(trusted, origin) {
		return nil
	}
	if strings.EqualFold(origin, RequestOrigin(r)) {
		return nil
	}
	return fmt.Errorf("%w: Origin is %.80q", ErrCrossOrigin, origin)
}

// RequestOrigin is the origin (scheme://host[:port]) a request was sent
// to, as the browser names it: its Host, over the scheme of
// X-Forwarded-Proto (a proxy or API Gateway in front ending TLS), else
// https on a TLS connection, else http; "" without a Host. It is the one
// reading of a request's own address: the base of review URLs built from
// the request (compose.ReviewBase) and CheckOrigin's same-origin test
// both use it.
func RequestOrigin(r *http.Request) string {
	if r.Host == "" {
		return ""
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	if p := strings.ToLower(strings.TrimSpace(strings.Split(r.Header.Get("X-Forwarded-Proto"), ",")[0])); p == "http" || p == "https" {
		scheme = p
	}
	return scheme + "://" + r.Host
}

// Origin is the serialized origin (scheme://host[:port]) of an absolute
// URL such as the public URL, for CheckOrigin's trusted list; "" if u is
// not one.
func Origin(u string) string {
	p, err := url.Parse(u)
	if err != nil || p.Scheme == "" || p.Host == "" {
		return ""
	}
	return strings.ToLower(p.Scheme) + "://" + strings.ToLower(p.Host)
}
