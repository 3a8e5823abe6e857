package clientreg

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
)

// maxRedirectURI bounds one redirect URI's length.
const maxRedirectURI = 2000

// redirectKind is what a redirect URI that passed CheckRedirectURI is.
type redirectKind int

const (
	redirectHTTPS      redirectKind = iota + 1 // https, matched exactly
	redirectLoopback                           // http on loopback, any port (RFC 8252 7.3)
	redirectPrivateUse                         // reverse-domain private-use scheme (RFC 8252 7.1)
)

// refusedSchemes are never a place to send an authorization code.
var refusedSchemes = map[string]bool{
	"javascript": true, "data": true, "file": true, "vbscript": true,
	"blob": true, "about": true, "filesystem": true, "ws": true, "wss": true,
}

// CheckRedirectURI is the one rule for the redirect URIs of every client,
// registered, described by a metadata document or configured by the
// operator: https with a host and no user information; http only on
// loopback (127.0.0.1, [::1] or localhost), where any port is accepted at
// authorization time (RFC 8252 section 7.3); or a private-use scheme in
// reverse-domain form such as com.example.app:/callback (RFC 8252 section
// 7.1). Never a fragment, a wildcard, white space, a relative URI, or the
// javascript, data or file schemes. The error says which rule failed.
func CheckRedirectURI(raw string) error {
	_, err := classifyRedirect(raw)
	return err
}

func classifyRedirect(raw string) (redirectKind, error) {
	if err := checkRedirectText(raw); err != nil {
		return 0, err
	}
	u, err := url.Parse(raw)
	if err != nil {
		return 0, errors.New("not a URI")
	}
	if !u.IsAbs() {
		return 0, errors.New("not an absolute URI")
	}
	if u.User != nil {
		return 0, errors.New("user information is not allowed")
	}
	scheme := strings.ToLower(u.Scheme)
	switch {
	case scheme == "https":
		if u.Opaque != "" || u.Hostname() == "" {
			return 0, errors.New("an https redirect URI needs a host")
		}
		return redirectHTTPS, nil
	case scheme == "http":
		if u.Opaque != "" || !loopbackHost(u.Hostname()) {
			return 0, errors.New("http is allowed only on loopback (127.0.0.1, [::1] or localhost); use https")
		}
		return redirectLoopback, nil
	case refusedSchemes[scheme]:
		return 0, fmt.Errorf("the %s scheme is not allowed", scheme)
	case !strings.Contains(scheme, "."):
		return 0, fmt.Errorf("the private-use scheme %q is not in reverse-domain form (such as com.example.app)", scheme)
	}
	return redirectPrivateUse, nil
}

// checkRedirectText refuses what no redirect URI may contain, before
// parsing.
func checkRedirectText(raw string) error {
	switch {
	case raw == "":
		return errors.New("empty")
	case len(raw) > maxRedirectURI:
		return fmt.Errorf("longer than %d bytes", maxRedirectURI)
	case strings.Contains(raw, "#"):
		return errors.New("a fragment is not allowed")
	case strings.Contains(raw, "*"):
		return errors.New("wildcards are not allowed")
	}
	for _, r := range raw {
		if r <= ' ' || r == 0x7f {
			return errors.New("white space and control characters are not allowed")
		}
	}
	return nil
}

// loopbackHost reports whether host (without brackets or port) names this
// device.
func loopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && (ip.Equal(net.IPv4(127, 0, 0, 1)) || ip.Equal(net.IPv6loopback))
}

// matchRedirect reports whether requested may be used for registered:
// equal, or both loopback http differing only in the port.
func matchRedirect(registered, requested string) bool {
	if registered == requested {
		return true
	}
	kind, err := classifyRedirect(registered)
	if err != nil || kind != redirectLoopback {
		return false
	}
	if k, err := classifyRedirect(requested); err != nil || k != redirectLoopback {
		return false
	}
	a, _ := url.Parse(registered)
	b, _ := url.Parse(requested)
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Hostname(), b.Hostname()) &&
		a.EscapedPath() == b.EscapedPath() && a.RawQuery == b.RawQuery
}
