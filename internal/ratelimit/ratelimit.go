// Package ratelimit counts what callers spend per source and in all: a
// token bucket per source (a bounded number of them, the least recently
// seen forgotten first) and one for everyone, so that one source's flood
// spends its own bucket, not the others'. The authorization server uses it
// for dynamic client registration and client ID metadata document fetches
// (internal/clientreg), for authorization, token and revocation requests,
// per source and per client (internal/authserver), and for reviewers'
// decisions (internal/review, internal/slackact). A request's source is its
// address (RemoteIP); behind the operator's trusted proxies, the address
// they name (Proxies.Forwarded, in front of every local listener).
package ratelimit

import (
	"container/list"
	"context"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Rate is a number of events per window: Count may come at once, and
// they come back evenly over Per.
type Rate struct {
	Count int
	Per   time.Duration
}

// Valid: a rate that lets something through.
func (r Rate) Valid() bool { return r.Count > 0 && r.Per > 0 }

func (r Rate) limiter() *rate.Limiter {
	return rate.NewLimiter(rate.Limit(float64(r.Count)/r.Per.Seconds()), r.Count)
}

// Limiter counts events per source (and per client, PerClient) and in
// all. Safe for concurrent use.
type Limiter struct {
	mu        sync.Mutex
	perSource Rate
	perClient Rate // PerClient; none when not Valid
	global    *rate.Limiter
	max       int
	sources   map[string]*list.Element // of *sourceBucket
	recent    *list.List               // most recently seen first
}

type sourceBucket struct {
	source string
	bucket *rate.Limiter
}

// New returns a Limiter of perSource for each of at most maxSources
// sources, and global in all.
func New(perSource, global Rate, maxSources int) *Limiter {
	return &Limiter{
		perSource: perSource,
		global:    global.limiter(),
		max:       maxSources,
		sources:   make(map[string]*list.Element),
		recent:    list.New(),
	}
}

// Take spends one event of source at now: 0 when allowed, else how long
// until one would be (and nothing is spent).
func (l *Limiter) Take(source string, now time.Time) time.Duration {
	wait, _ := l.take(source, "", 1, now)
	return wait
}

// Bound names the bucket that refused an event (Spend): the source's, its
// client's (PerClient) or everyone's.
type Bound int

// The Bounds.
const (
	BySource Bound = iota + 1
	ByClient
	InAll
)

// Spend is Take that also says which bound refused (0 when none did), for
// a refusal that names it.
func (l *Limiter) Spend(source string, now time.Time) (time.Duration, Bound) {
	return l.take(source, "", 1, now)
}

// TakeN is Take of n events at once (work counted by its items): all of
// them, or none and how long until they would be; n beyond a bucket's
// Count never is (rate.InfDuration).
func (l *Limiter) TakeN(source string, n int, now time.Time) time.Duration {
	wait, _ := l.take(source, "", n, now)
	return wait
}

// PerClient also counts, in TakeFor, each client a request names at r,
// a bucket of its own beside the source's: set above the per-source
// rate, one source cannot spend a client's, whose id anyone may name.
// It returns l.
func (l *Limiter) PerClient(r Rate) *Limiter {
	l.perClient = r
	return l
}

// TakeFor spends one event at now of source, of client (with PerClient,
// when not ""), and in all: 0 when all allow it, else how long until
// they would (and nothing is spent).
func (l *Limiter) TakeFor(source, client string, now time.Time) time.Duration {
	wait, _ := l.take(source, client, 1, now)
	return wait
}

// take spends n events at now of source, of client (as TakeFor) and in
// all, or none of them and says which bound refused.
func (l *Limiter) take(source, client string, n int, now time.Time) (time.Duration, Bound) {
	l.mu.Lock()
	defer l.mu.Unlock()
	type counted struct {
		bucket *rate.Limiter
		bound  Bound
	}
	buckets := []counted{{l.bucket(source, l.perSource), BySource}}
	if client != "" && l.perClient.Valid() {
		buckets = append(buckets, counted{l.bucket(clientKey+client, l.perClient), ByClient})
	}
	buckets = append(buckets, counted{l.global, InAll})
	taken := make([]*rate.Reservation, 0, len(buckets))
	for _, b := range buckets {
		r := b.bucket.ReserveN(now, n)
		taken = append(taken, r)
		if d := r.DelayFrom(now); d > 0 {
			for _, r := range taken {
				r.CancelAt(now)
			}
			return d, b.bound
		}
	}
	return 0, 0
}

// clientKey prefixes a client's key among the sources' (addresses).
const clientKey = "client\x00"

// bucket returns source's bucket, making it at r (and forgetting the
// least recently seen source when full) the first time.
func (l *Limiter) bucket(source string, r Rate) *rate.Limiter {
	if e, ok := l.sources[source]; ok {
		l.recent.MoveToFront(e)
		return e.Value.(*sourceBucket).bucket
	}
	if l.recent.Len() >= l.max {
		oldest := l.recent.Back()
		l.recent.Remove(oldest)
		delete(l.sources, oldest.Value.(*sourceBucket).source)
	}
	b := &sourceBucket{source: source, bucket: r.limiter()}
	l.sources[source] = l.recent.PushFront(b)
	return b.bucket
}

// RetryAfter sets h's Retry-After to wait, in whole seconds rounded up,
// at most a day (a wait no bucket ends, rate.InfDuration, included): what
// every refusal of a limit tells its client.
func RetryAfter(h http.Header, wait time.Duration) {
	h.Set("Retry-After", strconv.FormatInt(int64(math.Ceil(min(wait, 24*time.Hour).Seconds())), 10))
}

type sourceKey struct{}

// WithSource returns ctx naming source as the source of the request it
// serves, for a limit counted below the handler that knows the request
// (a client lookup's document fetch).
func WithSource(ctx context.Context, source string) context.Context {
	return context.WithValue(ctx, sourceKey{}, source)
}

// SourceOf is the source ctx names (WithSource), "" when none.
func SourceOf(ctx context.Context) string {
	s, _ := ctx.Value(sourceKey{}).(string)
	return s
}

// RemoteIP is the usual source of a request: the address it came from
// (AddressSource).
func RemoteIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	return AddressSource(host)
}

// AddressSource is the source of a request from the IP address ip: the
// address, an IPv6 one as its /64 (what one host is usually given); a
// source behind a proxy or a gateway passes it the caller's address.
func AddressSource(ip string) string {
	addr, err := netip.ParseAddr(ip)
	if err != nil {
		return ip
	}
	addr = addr.Unmap()
	if addr.Is6() {
		prefix, _ := addr.Prefix(64)
		return prefix.String()
	}
	return addr.String()
}

// Proxies are the operator's trusted proxies (--trusted-proxies): the
// addresses of the tunnel or reverse proxy in front of the local server,
// whose X-Forwarded-For names the caller. It is a flag.Value of
// comma-separated CIDRs or addresses (127.0.0.1/32,::1); empty: none.
type Proxies []netip.Prefix

// Set reads comma-separated CIDRs or single addresses.
func (p *Proxies) Set(s string) error {
	var list Proxies
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		prefix, err := netip.ParsePrefix(f)
		if err != nil {
			addr, aerr := netip.ParseAddr(f)
			if aerr != nil {
				return fmt.Errorf("%q is neither a CIDR (127.0.0.1/32) nor an IP address", f)
			}
			addr = addr.Unmap()
			prefix = netip.PrefixFrom(addr, addr.BitLen())
		}
		list = append(list, prefix.Masked())
	}
	*p = list
	return nil
}

func (p Proxies) String() string {
	s := make([]string, len(p))
	for i, prefix := range p {
		s[i] = prefix.String()
	}
	return strings.Join(s, ",")
}

// trusts reports whether addr is one of the proxies.
func (p Proxies) trusts(addr netip.Addr) bool {
	addr = addr.Unmap().WithZone("")
	for _, prefix := range p {
		if prefix.Contains(addr) {
			return true
		}
	}
	return false
}

// Forwarded returns next, each request of which comes (its RemoteAddr,
// which RemoteIP reads) from the address its trusted proxies name. A
// request whose connection's peer is not one of p is left as it is: its
// X-Forwarded-For is whatever its sender chose. From a trusted peer,
// X-Forwarded-For is walked from the right (the nearest hop) past the
// addresses of trusted proxies to the first one that is not, the
// caller: the entries left of it are the caller's to forge. At an entry
// that is not an address (or where every entry is trusted) the walk stops
// at the last trusted hop. Only X-Forwarded-For is read: a proxy that
// writes only one of it and RFC 7239 Forwarded passes the other on from
// the caller untouched. With no proxies, next itself.
func (p Proxies) Forwarded(next http.Handler) http.Handler {
	if len(p) == 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if from, ok := p.caller(r); ok {
			r = r.WithContext(r.Context())
			r.RemoteAddr = net.JoinHostPort(from.String(), "0")
		}
		next.ServeHTTP(w, r)
	})
}

// caller is the address r's trusted proxies name as its caller, false
// when r's peer is not a trusted proxy or names none.
func (p Proxies) caller(r *http.Request) (netip.Addr, bool) {
	peer, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil || !p.trusts(peer.Addr()) {
		return netip.Addr{}, false
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	last := peer.Addr().Unmap()
	for i := len(hops) - 1; i >= 0; i-- {
		hop, ok := forwardedAddr(hops[i])
		if !ok {
			break
		}
		last = hop
		if !p.trusts(hop) {
			break
		}
	}
	return last, last != peer.Addr().Unmap()
}

// forwardedAddr reads one X-Forwarded-For entry: an address, perhaps with
// a port ([::1]:80, 192.0.2.1:80), as some proxies write.
func forwardedAddr(s string) (netip.Addr, bool) {
	s = strings.TrimSpace(s)
	if addr, err := netip.ParseAddr(s); err == nil && addr.Zone() == "" {
		return addr.Unmap(), true
	}
	if ap, err := netip.ParseAddrPort(s); err == nil && ap.Addr().Zone() == "" {
		return ap.Addr().Unmap(), true
	}
	return netip.Addr{}, false
}
