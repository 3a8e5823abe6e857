package clientreg

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/mcp-elicitation/elicitation/internal/ratelimit"
)

// MaxDocument bounds a client ID metadata document: a bigger one is
// refused, not truncated.
const MaxDocument = 5 << 10

// Defaults for DocumentOptions' zero values.
const (
	DefaultDocumentTimeout = 5 * time.Second
	DefaultDocumentTTL     = 5 * time.Minute
	MinDocumentTTL         = 30 * time.Second
	MaxDocumentTTL         = 24 * time.Hour
	DefaultDocumentEntries = 1000
)

// Default bounds on document fetches (cache misses).
var (
	DefaultDocumentPerSource = Rate{Count: 120, Per: time.Hour}
	DefaultDocumentGlobal    = Rate{Count: 5000, Per: time.Hour}
)

// ErrTooManyFetches: the lookup's source, or all sources, fetched as many
// documents as they may for now; nothing was fetched. It is not a verdict
// on the client: a host keeps what it has and retries later.
var ErrTooManyFetches = errors.New("clientreg: too many client metadata documents fetched; retry later")

// DocumentOptions configures client ID metadata documents: a client_id
// that is an https URL with a path names the document describing the
// client, fetched from the public internet only.
type DocumentOptions struct {
	// Disabled turns them off: such a client_id is then an unknown client.
	Disabled bool
	// AllowInsecureLoopback, for tests, lets documents be fetched from
	// loopback addresses, over http too. Never set it in production.
	AllowInsecureLoopback bool
	// RootCAs, when set, are the certificate authorities trusted instead
	// of the system's (tests).
	RootCAs *x509.CertPool
	// Timeout bounds a whole fetch (DefaultDocumentTimeout).
	Timeout time.Duration
	// TTL is how long a document is kept when it says nothing of caching
	// (DefaultDocumentTTL); a max-age it gives is honoured between
	// MinDocumentTTL and MaxDocumentTTL.
	TTL time.Duration
	// MaxEntries bounds the documents kept (DefaultDocumentEntries).
	MaxEntries int
	// PerSource and Global bound the documents fetched (cache misses:
	// any unauthenticated request naming a new URL as its client_id
	// costs one), per source (ratelimit.SourceOf the lookup's context;
	// DefaultMaxSources of them counted) and in all
	// (DefaultDocumentPerSource, DefaultDocumentGlobal).
	PerSource, Global Rate
}

// DocumentError is a client ID metadata document that cannot be used: the
// URL, why in words fit for the client's developer, and the underlying
// error if any. What reaches a browser is the caller's choice.
type DocumentError struct {
	URL    string
	Reason string
	Err    error
	// Unavailable: the document's host did not answer in time, or
	// answered 5xx or 429, so the document may well be fine (Unknown).
	Unavailable bool
}

func (e *DocumentError) Error() string {
	return "client metadata document at " + e.URL + ": " + e.Reason
}

func (e *DocumentError) Unwrap() error { return e.Err }

// errPrivateAddress is a connection refused because of where it goes.
var errPrivateAddress = errors.New("private address")

// documents fetches and caches client ID metadata documents.
type documents struct {
	opts    DocumentOptions
	client  *http.Client
	now     func() time.Time
	group   singleflight.Group
	fetches *ratelimit.Limiter

	mu    sync.Mutex
	cache map[string]cachedDocument
}

type cachedDocument struct {
	client  Client
	expires time.Time
}

func newDocuments(opts DocumentOptions, now func() time.Time) *documents {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultDocumentTimeout
	}
	if opts.TTL <= 0 {
		opts.TTL = DefaultDocumentTTL
	}
	opts.TTL = min(max(opts.TTL, MinDocumentTTL), MaxDocumentTTL)
	if opts.MaxEntries <= 0 {
		opts.MaxEntries = DefaultDocumentEntries
	}
	if !opts.PerSource.Valid() {
		opts.PerSource = DefaultDocumentPerSource
	}
	if !opts.Global.Valid() {
		opts.Global = DefaultDocumentGlobal
	}
	dialer := &net.Dialer{Timeout: opts.Timeout, Control: guard(opts.AllowInsecureLoopback)}
	transport := &http.Transport{
		Proxy:                  nil, // a proxy would be the address checked
		DialContext:            dialer.DialContext,
		TLSClientConfig:        &tls.Config{RootCAs: opts.RootCAs, MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout:    opts.Timeout,
		ResponseHeaderTimeout:  opts.Timeout,
		MaxResponseHeaderBytes: 16 << 10,
		ForceAttemptHTTP2:      true,
		MaxIdleConns:           10,
		IdleConnTimeout:        30 * time.Second,
	}
	client := &http.Client{
		Transport: transport,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
	return &documents{opts: opts, client: client, now: now, cache: make(map[string]cachedDocument),
		fetches: ratelimit.New(opts.PerSource, opts.Global, DefaultMaxSources)}
}

// guard refuses, at connect time (after any DNS answer, so rebinding
// too), every address that is not public; loopback passes when allowed.
func guard(allowLoopback bool) func(network, address string, _ syscall.RawConn) error {
	return func(network, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return fmt.Errorf("%w: %s", errPrivateAddress, address)
		}
		addr := ap.Addr().Unmap()
		if allowLoopback && addr.IsLoopback() {
			return nil
		}
		if !publicAddr(addr) {
			return fmt.Errorf("%w: %s", errPrivateAddress, addr)
		}
		return nil
	}
}

// notPublic are the special-purpose ranges the netip predicates do not
// name.
var notPublic = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"), // shared address space (CGN)
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("192.0.2.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("198.51.100.0/24"),
	netip.MustParsePrefix("203.0.113.0/24"),
	netip.MustParsePrefix("240.0.0.0/4"), // reserved and broadcast
	netip.MustParsePrefix("::/96"),       // IPv4-compatible (deprecated)
	netip.MustParsePrefix("64:ff9b::/96"),
	netip.MustParsePrefix("64:ff9b:1::/48"), // NAT64: may reach private IPv4
	netip.MustParsePrefix("100::/64"),
	netip.MustParsePrefix("2001::/32"), // Teredo
	netip.MustParsePrefix("2001:db8::/32"),
	netip.MustParsePrefix("2002::/16"), // 6to4
}

// publicAddr reports whether addr is a public unicast address.
func publicAddr(addr netip.Addr) bool {
	if !addr.IsValid() || addr.IsLoopback() || addr.IsPrivate() || addr.IsUnspecified() ||
		addr.IsLinkLocalUnicast() || addr.IsMulticast() {
		return false
	}
	for _, p := range notPublic {
		if p.Contains(addr) {
			return false
		}
	}
	return true
}

// isDocumentID reports whether clientID is to be looked up as a metadata
// document's URL.
func (d *documents) isDocumentID(clientID string) bool {
	if strings.HasPrefix(clientID, "https://") {
		return true
	}
	return d.opts.AllowInsecureLoopback && strings.HasPrefix(clientID, "http://")
}

// lookup returns the client the document at clientID describes, from the
// cache or fetched (once, however many ask at the same time).
func (d *documents) lookup(ctx context.Context, clientID string) (Client, error) {
	if d.opts.Disabled {
		return Client{}, ErrUnknownClient
	}
	if reason := d.checkURL(clientID); reason != "" {
		return Client{}, &DocumentError{URL: clientID, Reason: reason}
	}
	if c, ok := d.cached(clientID); ok {
		return c, nil
	}
	if d.fetches.Take(ratelimit.SourceOf(ctx), d.now()) > 0 {
		return Client{}, fmt.Errorf("client metadata document at %s: %w", clientID, ErrTooManyFetches)
	}
	ch := d.group.DoChan(clientID, func() (any, error) {
		// A fetch that ended between cached and DoChan has filled the cache.
		if c, ok := d.cached(clientID); ok {
			return c, nil
		}
		// Not the first caller's context: the others wait on this fetch.
		return d.fetch(context.WithoutCancel(ctx), clientID)
	})
	select {
	case res := <-ch:
		if res.Err != nil {
			return Client{}, res.Err
		}
		return res.Val.(Client), nil
	case <-ctx.Done():
		return Client{}, fmt.Errorf("client metadata document at %s: %w", clientID, ctx.Err())
	}
}

// checkURL says what is wrong with clientID as a document's URL
// (draft-ietf-oauth-client-id-metadata-document section 3), or "".
func (d *documents) checkURL(clientID string) string {
	u, err := url.Parse(clientID)
	switch {
	case err != nil || len(clientID) > 512:
		return "not a URL of at most 512 bytes"
	case u.Scheme == "http" && !loopbackHost(u.Hostname()):
		return "not https"
	case u.Hostname() == "" || u.User != nil || u.Opaque != "":
		return "the URL needs a host and no user information"
	case strings.Contains(clientID, "#"):
		return "the URL has a fragment"
	case u.Path == "" || u.Path == "/":
		return "the URL has no path"
	}
	for _, seg := range strings.Split(u.Path, "/") {
		if seg == "." || seg == ".." {
			return "the URL's path has a . or .. segment"
		}
	}
	return ""
}

func (d *documents) cached(clientID string) (Client, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	e, ok := d.cache[clientID]
	if !ok || !d.now().Before(e.expires) {
		return Client{}, false
	}
	return e.client, true
}

// keep caches c for ttl, making room by dropping expired documents, then
// the one closest to expiry.
func (d *documents) keep(c Client, ttl time.Duration) {
	d.mu.Lock()
	defer d.mu.Unlock()
	now := d.now()
	if _, ok := d.cache[c.ID]; !ok && len(d.cache) >= d.opts.MaxEntries {
		var soonest string
		for id, e := range d.cache {
			if !now.Before(e.expires) {
				delete(d.cache, id)
			} else if soonest == "" || e.expires.Before(d.cache[soonest].expires) {
				soonest = id
			}
		}
		if len(d.cache) >= d.opts.MaxEntries {
			delete(d.cache, soonest)
		}
	}
	d.cache[c.ID] = cachedDocument{client: c, expires: now.Add(ttl)}
}

// fetch gets, checks and caches the document at clientID within the
// timeout.
func (d *documents) fetch(ctx context.Context, clientID string) (Client, error) {
	ctx, cancel := context.WithTimeout(ctx, d.opts.Timeout)
	defer cancel()
	fail := func(reason string, err error, unavailable bool) (Client, error) {
		return Client{}, &DocumentError{URL: clientID, Reason: reason, Err: err, Unavailable: unavailable}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, clientID, nil)
	if err != nil {
		return fail("not a URL", err, false)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := d.client.Do(req)
	if err != nil {
		return fail(d.fetchReason(err), err, !errors.Is(err, errPrivateAddress))
	}
	defer resp.Body.Close()
	body, reason, err := readDocument(resp)
	if ctx.Err() != nil {
		// The time ran out while reading: whatever arrived (a body cut
		// short, read as ended) is not the document.
		return fail(d.fetchReason(ctx.Err()), ctx.Err(), true)
	}
	if reason != "" {
		busy := resp.StatusCode >= http.StatusInternalServerError || resp.StatusCode == http.StatusTooManyRequests
		return fail(reason, err, busy || err != nil)
	}
	c, reason := parseDocument(clientID, body)
	if reason != "" {
		return fail(reason, nil, false)
	}
	c.IssuedAt = d.now()
	d.keep(c, cacheTTL(resp.Header.Get("Cache-Control"), d.opts.TTL))
	return c, nil
}

// fetchReason words a failed request.
func (d *documents) fetchReason(err error) string {
	switch {
	case errors.Is(err, errPrivateAddress):
		return "its host has a private, loopback or otherwise non-public address"
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("no complete answer within %v", d.opts.Timeout)
	}
	return "unreachable"
}

// readDocument reads a 200 JSON answer of at most MaxDocument bytes; else
// it says why not.
func readDocument(resp *http.Response) ([]byte, string, error) {
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		return nil, "it redirects, and redirects are not followed", nil
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Sprintf("it answered %d, not 200", resp.StatusCode), nil
	}
	if mt, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type")); err != nil ||
		(mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
		return nil, "not JSON (Content-Type is not application/json)", nil
	}
	tooBig := fmt.Sprintf("larger than %d KiB", MaxDocument>>10)
	if resp.ContentLength > MaxDocument {
		return nil, tooBig, nil
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxDocument+1))
	if err != nil {
		return nil, "reading it failed", err
	}
	if len(body) > MaxDocument {
		return nil, tooBig, nil
	}
	return body, "", nil
}

// parseDocument checks the document served at clientID and returns the
// client it describes, or why it cannot be used.
func parseDocument(clientID string, body []byte) (Client, string) {
	var m clientMetadata
	if err := json.Unmarshal(body, &m); err != nil {
		return Client{}, "not JSON client metadata"
	}
	switch {
	case m.ClientID != clientID:
		return Client{}, "its client_id is not this URL"
	case m.ClientSecret != nil || m.ClientSecretExpiresAt != nil:
		return Client{}, "it holds a client_secret, which a public document must not"
	}
	c, merr := m.toClient(true)
	if merr != nil {
		return Client{}, merr.description
	}
	c.ID, c.Source = clientID, Metadata
	return c, ""
}

// cacheTTL is how long a document is kept: its Cache-Control max-age
// between MinDocumentTTL and MaxDocumentTTL, the minimum for no-store or
// no-cache, else def.
func cacheTTL(cacheControl string, def time.Duration) time.Duration {
	for _, directive := range strings.Split(cacheControl, ",") {
		name, value, _ := strings.Cut(strings.ToLower(strings.TrimSpace(directive)), "=")
		switch name {
		case "no-store", "no-cache":
			return MinDocumentTTL
		case "max-age":
			secs, err := strconv.ParseInt(strings.Trim(value, `"`), 10, 64)
			if err != nil || secs < 0 {
				continue
			}
			ttl := time.Duration(min(secs, int64(MaxDocumentTTL/time.Second))) * time.Second
			return min(max(ttl, MinDocumentTTL), MaxDocumentTTL)
		}
	}
	return def
}

// Unknown reports whether err, from Lookup, says there is no such client:
// ErrUnknownClient, or a metadata document that cannot be used. A lookup
// that failed (the store, a document's host unavailable, a fetch over its
// bound) is not: the client may well exist, and a host told it is unknown
// drops what it holds.
func Unknown(err error) bool {
	var doc *DocumentError
	return errors.Is(err, ErrUnknownClient) || (errors.As(err, &doc) && !doc.Unavailable)
}
