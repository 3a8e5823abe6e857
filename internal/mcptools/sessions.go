package mcptools

import (
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The defaults of Options.SessionIdle, MaxSessions and MaxBodyBytes. A
// session costs about 25 KB, so the cap bounds them to tens of megabytes;
// an agent between two tool calls (a human thinking) is rarely idle for
// half an hour, and one that is reconnects (its next request gets 404 and
// its client initializes again).
const (
	DefaultSessionIdle  = 30 * time.Minute
	DefaultMaxSessions  = 1000
	DefaultMaxBodyBytes = 1 << 20
)

type sessionCaps struct {
	idle    time.Duration // 0: never
	max     int           // 0: no cap
	maxBody int64
	// opening counts initialize requests in flight, which are sessions
	// the server does not list yet.
	opening atomic.Int64
}

func sessionLimits(o Options) *sessionCaps {
	l := &sessionCaps{idle: o.SessionIdle, max: o.MaxSessions, maxBody: o.MaxBodyBytes}
	switch {
	case l.idle == 0:
		l.idle = DefaultSessionIdle
	case l.idle < 0:
		l.idle = 0
	}
	switch {
	case l.max == 0:
		l.max = DefaultMaxSessions
	case l.max < 0:
		l.max = 0
	}
	if l.maxBody <= 0 {
		l.maxBody = DefaultMaxBodyBytes
	}
	return l
}

// capSessions refuses a request that would open a session (a POST without
// Mcp-Session-Id: an initialize) while max sessions are open, with 503,
// Retry-After and a sentence saying why and what to do. Requests of open
// sessions always pass.
func (l *sessionCaps) capSessions(srv *mcp.Server, next http.Handler) http.Handler {
	if l.max == 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Header.Get("Mcp-Session-Id") != "" {
			next.ServeHTTP(w, r)
			return
		}
		n := l.opening.Add(1)
		opened := &openingWriter{ResponseWriter: w, done: func() { l.opening.Add(-1) }}
		defer opened.opened()
		for range srv.Sessions() {
			n++
		}
		if n > int64(l.max) {
			retry := "later"
			if l.idle > 0 {
				retry = fmt.Sprintf("after idle sessions close (%s without a request)", l.idle)
			}
			w.Header().Set("Retry-After", "60")
			http.Error(w, fmt.Sprintf("too many open MCP sessions: this server keeps at most %d; close sessions you no longer use (DELETE /mcp with their Mcp-Session-Id) or retry %s; the operator can raise --mcp-max-sessions", l.max, retry), http.StatusServiceUnavailable)
			return
		}
		next.ServeHTTP(opened, r)
	})
}

// openingWriter ends an initialize's count as opening when its response
// starts: by then the SDK lists its session (or it failed), so counting
// it as both would refuse a session too early.
type openingWriter struct {
	http.ResponseWriter
	once sync.Once
	done func()
}

func (w *openingWriter) opened() { w.once.Do(w.done) }

func (w *openingWriter) WriteHeader(code int) {
	w.opened()
	w.ResponseWriter.WriteHeader(code)
}

func (w *openingWriter) Write(b []byte) (int, error) {
	w.opened()
	return w.ResponseWriter.Write(b)
}

func (w *openingWriter) Flush() { _ = http.NewResponseController(w.ResponseWriter).Flush() }

func (w *openingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
