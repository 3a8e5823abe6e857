package compose

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"math"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/ratelimit"
	"github.com/mcp-elicitation/elicitation/internal/review"
)

// Limits bound what one client can hold of the server: its MCP sessions,
// its connections and its request bodies.
type Limits struct {
	// MCP sessions (the local server; the Lambda function has none).
	SessionIdle time.Duration // close a session without a request for this long; 0 never
	MaxSessions int           // refuse an initialize while this many are open; 0 no cap
	// SessionShare is each principal's share of MaxSessions: past it, a
	// principal's new session closes its own idlest one.
	SessionShare int

	// elicit_await calls waiting at once, in all and per principal; 0 no cap.
	MaxWaits, WaitShare int
	// MaxWatches and WatchShare cap the watches that outlive a call on a
	// session (task status notifications, URL pushes), in all and per
	// principal.
	MaxWatches, WatchShare int

	// The local listeners.
	ReadTimeout  time.Duration // to read one request's body, from its first byte
	WriteTimeout time.Duration // to write one response; 0: MaxWait + WaitMargin + 30s
	IdleTimeout  time.Duration // a kept-alive connection without a request

	MaxBody int64 // bytes of one request body, on every route

	// Signed-in reviewers' decisions in an hour, each reviewer's and
	// everyone's (ReviewLimiter); 0 no cap.
	ReviewShare, MaxReviewDecisions int
}

// The headers of a request must arrive within this, whatever its size.
const readHeaderTimeout = 10 * time.Second

func init() {
	Table = append(Table,
		Setting{Name: "mcp-session-idle", Scope: Local, Default: "30m",
			Usage: "close an MCP session that sent no request for this long (its client reconnects); must exceed --max-wait plus --wait-margin, since a waiting elicit_await sends none; 0 never",
			bind:  func(s *Settings) Value { return (*durationValue)(&s.SessionIdle) },
			check: func(s *Settings) error {
				if err := between(func(s *Settings) time.Duration { return s.SessionIdle }, 0, 30*24*time.Hour)(s); err != nil {
					return err
				}
				// A waiting call is answered below the SDK (mcptools'
				// hand-over), so the SDK sees the session idle meanwhile.
				if s.SessionIdle != 0 && s.SessionIdle <= s.MaxWait+s.WaitMargin {
					return fmt.Errorf("must exceed --max-wait (%v) plus --wait-margin (%v), or a session could close under a waiting elicit_await", s.MaxWait, s.WaitMargin)
				}
				return nil
			}},
		Setting{Name: "mcp-max-sessions", Scope: Local, Default: "1000",
			Usage: "most MCP sessions open at once, a session counting once its initialize has arrived whole; past it an initialize closes the idlest session of the principal holding the most (where that one holds more than the newcomer would) or else one of its own, and is refused (503) only when none can be closed, until one closes or idles out; 0 no cap",
			bind:  func(s *Settings) Value { return (*intValue)(&s.MaxSessions) },
			check: nonNegative(func(s *Settings) int { return s.MaxSessions })},
		Setting{Name: "mcp-sessions-per-principal", Scope: Local, Default: "100",
			Usage: "each principal's share of --mcp-max-sessions, never more than half of it (the API key's principal; without keys the client's IP address, so one machine is one principal): a new session past it closes that principal's idlest one, and is refused (429) only when all of them have a call in flight",
			bind:  func(s *Settings) Value { return (*intValue)(&s.SessionShare) },
			check: func(s *Settings) error {
				if s.SessionShare < 1 {
					return errors.New("must be at least 1")
				}
				return nil
			}},
		Setting{Name: "max-waits", Scope: Local, Default: "500",
			Usage: "most elicit_await calls waiting at once, on every protocol era, counting each open 2026-07-28 task listen (subscriptions/listen) as one; past it a call gets the tool error busy (a listen: -32011), saying to retry in a few seconds; 0 no cap",
			bind:  func(s *Settings) Value { return (*intValue)(&s.MaxWaits) },
			check: nonNegative(func(s *Settings) int { return s.MaxWaits })},
		Setting{Name: "max-waits-per-principal", Scope: Local, Default: "64",
			Usage: "most elicit_await calls and task listens one principal (its API key, else its IP address) has waiting at once; past it that principal's call gets the tool error busy (retry after one returns, or use a task); 0 no cap",
			bind:  func(s *Settings) Value { return (*intValue)(&s.WaitShare) },
			check: nonNegative(func(s *Settings) int { return s.WaitShare })},
		Setting{Name: "max-watches", Scope: Local, Default: "10000",
			Usage: "most watches that outlive a call on a 2025-11-25 session (a task's notifications/tasks/status, a URL push and its complete notice), each 6-10 KB until its request ends or its session closes; past it a new one is not started (both are best effort: the host polls the task, the review link is in the result); 0 no cap",
			bind:  func(s *Settings) Value { return (*intValue)(&s.MaxWatches) },
			check: nonNegative(func(s *Settings) int { return s.MaxWatches })},
		Setting{Name: "max-watches-per-principal", Scope: Local, Default: "200",
			Usage: "most of those watches one principal (its API key, else its IP address) holds, so that one principal's requests cannot hold the process's memory; 0 no cap",
			bind:  func(s *Settings) Value { return (*intValue)(&s.WatchShare) },
			check: nonNegative(func(s *Settings) int { return s.WatchShare })},
		Setting{Name: "http-read-timeout", Scope: Local, Default: "30s",
			Usage: "longest time to receive one request's body (a slower client is cut off); headers have 10s",
			bind:  func(s *Settings) Value { return (*durationValue)(&s.ReadTimeout) },
			check: between(func(s *Settings) time.Duration { return s.ReadTimeout }, time.Second, time.Hour)},
		Setting{Name: "http-write-timeout", Scope: Local,
			Usage: "longest time to write one response; must exceed --max-wait plus --wait-margin; default: those plus 30s",
			bind:  func(s *Settings) Value { return (*durationValue)(&s.WriteTimeout) },
			check: func(s *Settings) error {
				if s.WriteTimeout != 0 && s.WriteTimeout <= s.MaxWait+s.WaitMargin {
					return fmt.Errorf("must exceed --max-wait (%v) plus --wait-margin (%v), or the longest elicit_await is cut off", s.MaxWait, s.WaitMargin)
				}
				return nil
			}},
		Setting{Name: "http-idle-timeout", Scope: Local, Default: "2m",
			Usage: "close a kept-alive connection that sends no request for this long",
			bind:  func(s *Settings) Value { return (*durationValue)(&s.IdleTimeout) },
			check: between(func(s *Settings) time.Duration { return s.IdleTimeout }, time.Second, 24*time.Hour)},
		Setting{Name: "max-body", Scope: Both, Default: "1048576",
			Usage: "largest request body in bytes, on every route (413 beyond it); a request's payload is at most 256 KiB",
			bind:  func(s *Settings) Value { return (*int64Value)(&s.MaxBody) },
			check: func(s *Settings) error {
				if s.MaxBody < 300<<10 {
					return fmt.Errorf("must be at least %d (a request's payload can be 256 KiB, escaped in JSON)", 300<<10)
				}
				return nil
			}},
		Setting{Name: "review-decisions-per-reviewer", Scope: Both, Default: "600",
			Usage: "most decisions one signed-in reviewer sends in an hour, coming back evenly over it: each decision on a page, each request of a batch's confirmation, a batch's selection, a revoke, a delegation made or ended, a decision from Slack; past it 429 saying when to retry, nothing decided (on Lambda counted in each submit function instance); at least 50 (a batch), or 0 no cap",
			bind:  func(s *Settings) Value { return (*intValue)(&s.ReviewShare) },
			check: batchOrNone(func(s *Settings) int { return s.ReviewShare })},
		Setting{Name: "review-decisions", Scope: Both, Default: "6000",
			Usage: "most decisions all signed-in reviewers send in an hour, counted as --review-decisions-per-reviewer counts them; at least 50, or 0 no cap",
			bind:  func(s *Settings) Value { return (*intValue)(&s.MaxReviewDecisions) },
			check: batchOrNone(func(s *Settings) int { return s.MaxReviewDecisions })},
	)
}

// batchOrNone checks a count of review decisions: 0 (no cap), or room for
// one whole batch (review.MaxBatch).
func batchOrNone(field func(*Settings) int) func(*Settings) error {
	return func(s *Settings) error {
		if n := field(s); n != 0 && n < review.MaxBatch {
			return fmt.Errorf("must be 0 (no cap) or at least %d, a batch's decisions", review.MaxBatch)
		}
		return nil
	}
}

// ReviewLimiter counts the signed-in reviewers' decisions (review.Options'
// Decisions): ReviewShare an hour each, MaxReviewDecisions in all; nil
// when both are 0.
func (s Settings) ReviewLimiter() *ratelimit.Limiter {
	if s.ReviewShare == 0 && s.MaxReviewDecisions == 0 {
		return nil
	}
	perHour := func(n int) ratelimit.Rate {
		if n == 0 {
			n = math.MaxInt32 // no cap of its own
		}
		return ratelimit.Rate{Count: n, Per: time.Hour}
	}
	return ratelimit.New(perHour(s.ReviewShare), perHour(s.MaxReviewDecisions), maxReviewers)
}

// maxReviewers bounds the reviewers whose share ReviewLimiter remembers
// (the least recently seen forgotten first).
const maxReviewers = 10000

// HTTPWriteTimeout is the write timeout of the listeners: WriteTimeout,
// else long enough for the longest elicit_await with a margin.
func (s Settings) HTTPWriteTimeout() time.Duration {
	if s.WriteTimeout > 0 {
		return s.WriteTimeout
	}
	return s.MaxWait + s.WaitMargin + 30*time.Second
}

// MCPLimits returns the session idle time, session cap and body limit in
// mcptools.Options' terms (where zero means its default and a negative
// value none).
func (s Settings) MCPLimits() (idle time.Duration, maxSessions int, maxBody int64) {
	idle, maxSessions = s.SessionIdle, s.MaxSessions
	if idle == 0 {
		idle = -1
	}
	if maxSessions == 0 {
		maxSessions = -1
	}
	return idle, maxSessions, s.MaxBody
}

// WaitLimits returns the caps on waiting elicit_await calls, in all and
// per principal, in mcptools.Options' terms (negative: none).
func (s Settings) WaitLimits() (maxWaits, perPrincipal int) {
	return noneIfZero(s.MaxWaits), noneIfZero(s.WaitShare)
}

// WatchLimits returns the caps on the watches that outlive a call, in all
// and per principal, in mcptools.Options' terms (negative: none).
func (s Settings) WatchLimits() (maxWatches, perPrincipal int) {
	return noneIfZero(s.MaxWatches), noneIfZero(s.WatchShare)
}

// noneIfZero reads a cap whose 0 means none as mcptools.Options reads it.
func noneIfZero(n int) int {
	if n == 0 {
		return -1
	}
	return n
}

// PendingBound is the bound on each principal's pending requests in
// elicitation.Config's terms (negative: none).
func (s Settings) PendingBound() int {
	if s.MaxPending == 0 {
		return -1
	}
	return s.MaxPending
}

func nonNegative(get func(*Settings) int) func(*Settings) error {
	return func(s *Settings) error {
		if get(s) < 0 {
			return errors.New("must not be negative")
		}
		return nil
	}
}

func atLeastOne(get func(*Settings) int) func(*Settings) error {
	return func(s *Settings) error {
		if get(s) < 1 {
			return errors.New("must be at least 1")
		}
		return nil
	}
}

// HTTPServer returns the server of one local listener serving h: headers
// within 10s, each body within ReadTimeout and MaxBody, each response
// within the write timeout (beyond the longest await), kept-alive
// connections closed after IdleTimeout. Bodies are bounded by
// LimitBodies, not by http.Server.ReadTimeout: that deadline would also
// cancel a long elicit_await once its body is read. A request from one of
// TrustedProxies comes from the caller they name (ratelimit.Proxies).
func HTTPServer(s Settings, h http.Handler, base context.Context, errorLog *log.Logger) *http.Server {
	return &http.Server{
		Handler:           s.TrustedProxies.Forwarded(LimitBodies(h, s.MaxBody, s.ReadTimeout)),
		ReadHeaderTimeout: readHeaderTimeout,
		WriteTimeout:      s.HTTPWriteTimeout(),
		IdleTimeout:       s.IdleTimeout,
		BaseContext:       func(net.Listener) context.Context { return base },
		ErrorLog:          errorLog,
	}
}

// LimitBodies bounds every request body to max bytes (413 beyond it, from
// the handler that reads it) and to within read of the request's start: a
// client sending its body a byte at a time is cut off. The read deadline
// is lifted once the body is read, so it never ends a long response.
func LimitBodies(next http.Handler, max int64, read time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > max {
			w.Header().Set("Connection", "close")
			http.Error(w, fmt.Sprintf("request body too large: at most %d bytes", max), http.StatusRequestEntityTooLarge)
			return
		}
		if r.Body != nil && r.Body != http.NoBody {
			rc := http.NewResponseController(w)
			if read > 0 {
				_ = rc.SetReadDeadline(time.Now().Add(read))
			}
			r.Body = &deadlineBody{ReadCloser: http.MaxBytesReader(w, r.Body, max), rc: rc}
		}
		next.ServeHTTP(w, r)
	})
}

// deadlineBody lifts the read deadline when the body has been read to its
// end. After any other error (the deadline passed, the limit) it stays, so
// the server's reading of what is left after the handler is cut off too.
type deadlineBody struct {
	io.ReadCloser
	rc   *http.ResponseController
	done bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF && !b.done {
		b.done = true
		_ = b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}

type (
	intValue   int
	int64Value int64
)

func (v *intValue) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil {
		return errors.New("not a whole number")
	}
	*v = intValue(n)
	return nil
}
func (v *intValue) String() string { return strconv.Itoa(int(*v)) }

func (v *int64Value) Set(s string) error {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return errors.New("not a whole number of bytes")
	}
	*v = int64Value(n)
	return nil
}
func (v *int64Value) String() string { return strconv.FormatInt(int64(*v), 10) }
