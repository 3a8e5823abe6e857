package mcptools

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/ratelimit"
)

// The defaults of Options.SessionIdle, MaxSessions, SessionsPerPrincipal
// and MaxBodyBytes. A session costs about 100 KB, so the cap bounds them
// to about a hundred megabytes; an agent between two tool calls (a human
// thinking) is rarely idle for half an hour, and one that is reconnects
// (its next request gets 404 and its client initializes again).
const (
	DefaultSessionIdle          = 30 * time.Minute
	DefaultMaxSessions          = 1000
	DefaultSessionsPerPrincipal = 100
	DefaultMaxBodyBytes         = 1 << 20
)

// Principal is who a limit counts against for the HTTP request r: the
// API key's principal where the endpoint requires keys (the bearer-token
// middleware put it in r's context), else the client's IP address (the
// connection's, never a forwarded header a client could set), an IPv6 one
// as its /64 (ratelimit.RemoteIP: one host is given a /64, and would
// otherwise count as 2^64 principals). On a keyless local server every
// host on the same machine is one principal.
func Principal(r *http.Request) string {
	if ti := auth.TokenInfoFromContext(r.Context()); ti != nil && ti.UserID != "" {
		return ti.UserID
	}
	return "address " + ratelimit.RemoteIP(r)
}

// sessionCaps keeps the session limits: every principal may hold up to
// share sessions and the server up to max. A session counts once it
// exists: an initialize is admitted only when its whole body has arrived,
// so a client that never sends it holds a connection (cut off by the read
// timeout) but no place.
type sessionCaps struct {
	idle    time.Duration // 0: never
	max     int           // 0: no cap
	share   int           // of max, per principal
	maxBody int64

	mu      sync.Mutex
	tracked map[string]*tracked // session id -> its principal and use
	// opening counts admitted initializes whose response has not started
	// (sessions about to exist), in all and per principal.
	opening   int
	openingBy map[string]int
	// closing are evicted sessions the SDK may still list for a moment.
	closing map[string]bool
	// evicted remembers recently evicted sessions, so that their clients
	// are told why they are gone (at most maxEvicted).
	evicted map[string]bool
}

// maxEvicted bounds sessionCaps.evicted; past it the memory starts over.
const maxEvicted = 4096

// tracked is one session's owner and use.
type tracked struct {
	principal string
	last      time.Time // its last request began or ended
	posts     int       // POSTs in flight (a GET stream is not use)
}

func sessionLimits(o Options) *sessionCaps {
	l := &sessionCaps{idle: o.SessionIdle, max: o.MaxSessions, share: o.SessionsPerPrincipal, maxBody: o.MaxBodyBytes,
		tracked: map[string]*tracked{}, openingBy: map[string]int{}, closing: map[string]bool{}, evicted: map[string]bool{}}
	l.idle = limitOrDefault(l.idle, DefaultSessionIdle)
	l.max = limitOrDefault(l.max, DefaultMaxSessions)
	if l.share <= 0 {
		l.share = DefaultSessionsPerPrincipal
	}
	if l.max > 0 {
		l.share = min(l.share, fairShare(l.max))
	}
	if l.maxBody <= 0 {
		l.maxBody = DefaultMaxBodyBytes
	}
	return l
}

// capSessions admits a request that would open a session (a POST without
// Mcp-Session-Id: an initialize) only within its principal's share and
// the server's cap; a principal at its share gives up its idlest session
// for the new one. Requests of open sessions always pass, and are counted
// as their session's use.
func (l *sessionCaps) capSessions(srv *mcp.Server, next http.Handler) http.Handler {
	if l.max == 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if id := r.Header.Get("Mcp-Session-Id"); id != "" {
			l.serveSession(id, next, w, r)
			return
		}
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		l.serveInitialize(srv, next, w, r)
	})
}

// serveSession serves a request of an open session, as its use.
func (l *sessionCaps) serveSession(id string, next http.Handler, w http.ResponseWriter, r *http.Request) {
	l.mu.Lock()
	gone := l.evicted[id]
	l.mu.Unlock()
	if gone {
		http.Error(w, fmt.Sprintf("session not found: it was closed to make room for a newer session (a client holds at most %d, --mcp-sessions-per-principal, and a full server closes the idlest session of the client holding the most for one holding fewer); initialize again, and close sessions you no longer use (DELETE)", l.share), http.StatusNotFound)
		return
	}
	post := r.Method == http.MethodPost
	l.use(id, post, 1)
	defer l.use(id, post, -1)
	if r.Method != http.MethodDelete {
		next.ServeHTTP(w, r)
		return
	}
	// Only a DELETE that closed its session (204) ends its count: one the
	// SDK refused (another key's, a bad header) closed nothing.
	dw := &deleteWriter{ResponseWriter: w}
	next.ServeHTTP(dw, r)
	if dw.closed {
		l.mu.Lock()
		delete(l.tracked, id)
		l.mu.Unlock()
	}
}

// deleteWriter notes whether a DELETE was answered 204, the session closed.
type deleteWriter struct {
	http.ResponseWriter
	closed bool
}

func (d *deleteWriter) WriteHeader(code int) {
	d.closed = code == http.StatusNoContent
	d.ResponseWriter.WriteHeader(code)
}

func (l *sessionCaps) use(id string, post bool, d int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if t := l.tracked[id]; t != nil {
		t.last = time.Now()
		if post {
			t.posts += d
		}
	}
}

// serveInitialize reads the body, admits the request (or refuses it with
// the reason), and registers the session the response names.
func (l *sessionCaps) serveInitialize(srv *mcp.Server, next http.Handler, w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, l.maxBody))
	if err != nil {
		if errors.As(err, new(*http.MaxBytesError)) {
			http.Error(w, fmt.Sprintf("request body too large: at most %d bytes", l.maxBody), http.StatusRequestEntityTooLarge)
			return
		}
		http.Error(w, "the request body did not arrive", http.StatusBadRequest)
		return
	}
	r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	p := Principal(r)
	if refusal := l.admit(srv, p); refusal != nil {
		w.Header().Set("Retry-After", strconv.Itoa(refusal.retryAfter))
		http.Error(w, refusal.text, refusal.status)
		return
	}
	ew, ok := w.(*edgeWriter)
	if !ok {
		ew = &edgeWriter{ResponseWriter: w}
	}
	ew.opening = func() { l.opened(p, w.Header().Get("Mcp-Session-Id")) }
	defer ew.open()
	next.ServeHTTP(ew, r)
}

// opened ends an admitted initialize's count as opening and tracks the
// session its response names, if any.
func (l *sessionCaps) opened(principal, id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.opening--
	if l.openingBy[principal]--; l.openingBy[principal] <= 0 {
		delete(l.openingBy, principal)
	}
	if id != "" {
		l.tracked[id] = &tracked{principal: principal, last: time.Now()}
	}
}

// refusal is why an initialize is refused.
type refusal struct {
	status     int
	retryAfter int // seconds
	text       string
}

// admit decides whether principal may open one more session, closing its
// idlest session where that makes room, and counts the admitted one as
// opening. It returns why not otherwise: the principal's share is full of
// sessions in use, or the whole server is full.
func (l *sessionCaps) admit(srv *mcp.Server, principal string) *refusal {
	// The listing is taken under l.mu: a session opened (tracked) after a
	// listing taken before the lock would look gone to reconcile, be
	// forgotten and never evicted.
	l.mu.Lock()
	defer l.mu.Unlock()
	live := map[string]*mcp.ServerSession{}
	for ss := range srv.Sessions() {
		live[ss.ID()] = ss
	}
	mine, total := l.reconcile(live, principal)
	// Sessions listed but neither tracked nor closing are initializes
	// being answered; opening counts the same ones (and those not listed
	// yet) once.
	total += max(l.opening, len(live)-l.knownLive(live))
	mine += l.openingBy[principal]
	switch {
	case mine >= l.share:
		if !l.evictIdlest(live, principal) {
			return &refusal{status: http.StatusTooManyRequests, retryAfter: 10, text: fmt.Sprintf(
				"too many open MCP sessions for this client (%s): it has %d, its share of this server's %d, and every one has a request in flight; "+
					"close sessions you no longer use (DELETE /mcp with their Mcp-Session-Id) or retry when a call ends; the operator can raise --mcp-sessions-per-principal",
				principal, mine, l.max)}
		}
	case total >= l.max:
		if !l.makeRoom(live, principal, mine) {
			retry := "later"
			if l.idle > 0 {
				retry = fmt.Sprintf("after idle sessions close (%s without a request)", l.idle)
			}
			return &refusal{status: http.StatusServiceUnavailable, retryAfter: 60, text: fmt.Sprintf(
				"this MCP server is full: %d sessions are open, its most (%d), held by other clients (this client, %s, has %d of its share of %d); retry %s; the operator can raise --mcp-max-sessions",
				total, l.max, principal, mine, l.share, retry)}
		}
	}
	l.opening++
	l.openingBy[principal]++
	return nil
}

// reconcile forgets tracked sessions that are gone (closed, idled out)
// and counts the principal's and everyone's tracked sessions.
func (l *sessionCaps) reconcile(live map[string]*mcp.ServerSession, principal string) (mine, total int) {
	for id := range l.closing {
		if live[id] == nil {
			delete(l.closing, id)
		}
	}
	for id, t := range l.tracked {
		if live[id] == nil {
			delete(l.tracked, id)
			continue
		}
		total++
		if t.principal == principal {
			mine++
		}
	}
	return mine, total
}

// knownLive counts the listed sessions that are tracked or closing.
func (l *sessionCaps) knownLive(live map[string]*mcp.ServerSession) int {
	n := 0
	for id := range live {
		if l.tracked[id] != nil || l.closing[id] {
			n++
		}
	}
	return n
}

// evictIdlest closes the principal's session that has gone longest
// without a request, among those with no POST in flight; it reports
// whether there was one. Its client's next request gets 404, and a client
// that still wants a session initializes again.
func (l *sessionCaps) evictIdlest(live map[string]*mcp.ServerSession, principal string) bool {
	var (
		victim string
		oldest time.Time
	)
	for id, t := range l.tracked {
		if t.principal != principal || t.posts > 0 {
			continue
		}
		if victim == "" || t.last.Before(oldest) {
			victim, oldest = id, t.last
		}
	}
	if victim == "" {
		return false
	}
	delete(l.tracked, victim)
	if len(l.evicted) >= maxEvicted {
		clear(l.evicted)
	}
	l.evicted[victim] = true
	if ss := live[victim]; ss != nil {
		l.closing[victim] = true
		go ss.Close() // Close waits for the session's handlers; admission does not
	}
	return true
}

// CapSessions returns the session cap of the tools' own endpoint
// (sessions.go), with the limits of o (SessionIdle, MaxSessions and the
// other session fields; the rest of o is not read), for another MCP
// server's session handler: the proxy's --http listener gets the same cap
// from the same code. Wrap only a handler that keeps sessions.
func CapSessions(o Options) func(srv *mcp.Server, sessions http.Handler) http.Handler {
	caps := sessionLimits(o)
	return func(srv *mcp.Server, sessions http.Handler) http.Handler { return caps.capSessions(srv, sessions) }
}

// fairShare is the most sessions one principal may hold of a server that
// holds at most n: half of them, rounded up, whatever the operator's
// --mcp-sessions-per-principal, so that no principal holds every session
// and the rest always has room for others.
func fairShare(n int) int { return max(1, (n+1)/2) }

// makeRoom frees a place on a full server for principal, which holds mine
// sessions (opening ones included): it closes the idlest session of the
// principal holding the most, where that one holds more than principal
// would with the new session and has a session without a call in flight,
// else principal's own idlest. It reports whether it closed one.
func (l *sessionCaps) makeRoom(live map[string]*mcp.ServerSession, principal string, mine int) bool {
	held := map[string]int{}
	for _, t := range l.tracked {
		held[t.principal]++
	}
	holders := make([]string, 0, len(held))
	for p, n := range held {
		if p != principal && n > mine+1 {
			holders = append(holders, p)
		}
	}
	slices.SortFunc(holders, func(a, b string) int { return cmp.Or(cmp.Compare(held[b], held[a]), cmp.Compare(a, b)) })
	for _, p := range holders {
		if l.evictIdlest(live, p) {
			return true
		}
	}
	return l.evictIdlest(live, principal)
}
