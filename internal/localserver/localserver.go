// Package localserver is the one lifecycle of a local HTTP server: listen,
// serve each listener with the limits of compose.HTTPServer (headers within
// 10 s, every body within --http-read-timeout and --max-body, every
// response within the write timeout, kept-alive connections closed after
// --http-idle-timeout), run background loops (the retention cleanup, the
// notification worker) under the server's context, and close in order:
// stop accepting, let requests in flight finish for a grace period, end the
// rest, wait for the loops. The local server (cmd/elicitation), the proxy's
// embedded elicitation service (internal/proxy/gate) and the proxy's own
// HTTP listener (cmd/mcp-elicitation-proxy --http) all run on it.
//
// It knows nothing of what it serves: the caller opens its store and
// builds its handlers, and closes the store after Close.
package localserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/compose"
)

// DefaultGrace is how long Close lets requests in flight finish before it
// ends the ones still open (event streams, long waits).
const DefaultGrace = 3 * time.Second

// Options configure New.
type Options struct {
	// Settings are the limits of every listener (compose.HTTPServer):
	// MaxBody, ReadTimeout, WriteTimeout (or MaxWait and WaitMargin),
	// IdleTimeout.
	Settings compose.Settings
	// Log receives the server's errors (its http.Server's at warn level);
	// nil discards them.
	Log *slog.Logger
	// Grace is Close's grace period; 0: DefaultGrace.
	Grace time.Duration
}

// Server is a running local server: its listeners and its loops.
type Server struct {
	settings compose.Settings
	log      *slog.Logger
	grace    time.Duration

	// base is the context of every request and loop; Close cancels it
	// after the grace period so that open event streams and waits end.
	base   context.Context
	cancel context.CancelFunc

	mu      sync.Mutex
	servers []*http.Server
	closed  bool
	loops   sync.WaitGroup
	failed  chan error
}

// New returns a server with no listener yet.
func New(o Options) *Server {
	s := &Server{settings: o.Settings, log: o.Log, grace: o.Grace, failed: make(chan error, 1)}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.grace <= 0 {
		s.grace = DefaultGrace
	}
	s.base, s.cancel = context.WithCancel(context.Background())
	return s
}

// Listen opens a TCP listener on addr (host:port; port 0 picks one), with
// the error every local listener reports.
func Listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	return ln, nil
}

// Context is the server's context: it ends when Close has given requests
// their grace period.
func (s *Server) Context() context.Context { return s.base }

// Serve serves h on ln, with the limits of the server's settings, until
// Close. A listener that stops on its own is logged and reported on
// Failed. After Close, ln is closed and not served.
func (s *Server) Serve(ln net.Listener, h http.Handler) {
	srv := compose.HTTPServer(s.settings, h, s.base, slog.NewLogLogger(s.log.Handler(), slog.LevelWarn))
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		_ = ln.Close()
		return
	}
	s.servers = append(s.servers, srv)
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("server stopped", "addr", ln.Addr().String(), "err", err)
			select {
			case s.failed <- fmt.Errorf("serve on %s: %w", ln.Addr(), err):
			default:
			}
		}
	}()
}

// Go runs loop on its own goroutine with the server's context; Close waits
// for it to return. After Close, loop does not run.
func (s *Server) Go(loop func(ctx context.Context)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	s.loops.Add(1)
	go func() {
		defer s.loops.Done()
		loop(s.base)
	}()
}

// Cleaner is the part of a store the cleanup loop uses
// (elicitation.Store's Cleanup).
type Cleaner interface {
	Cleanup(ctx context.Context, now time.Time) (int, error)
}

// Cleanup removes the requests past their retention from store now and
// then every interval, until Close (a loop of Go); each pass has a minute.
func (s *Server) Cleanup(store Cleaner, every time.Duration, now func() time.Time) {
	s.Go(func(ctx context.Context) {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			pass, cancel := context.WithTimeout(ctx, time.Minute)
			n, err := store.Cleanup(pass, now())
			cancel()
			switch {
			case err != nil && ctx.Err() == nil:
				s.log.Error("cleanup failed", "err", err)
			case n > 0:
				s.log.Info("removed requests past their retention", "count", n)
			}
			select {
			case <-t.C:
			case <-ctx.Done():
				return
			}
		}
	})
}

// Failed reports a listener that stopped serving on its own; the server
// should then be closed.
func (s *Server) Failed() <-chan error { return s.failed }

// Close stops accepting connections, lets requests in flight finish for
// the grace period, then ends the rest (a waiting agent's call returns and
// it calls again once the server is back) and waits for the loops. The
// caller closes its store after it.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closed = true
	servers := s.servers
	s.servers = nil
	s.mu.Unlock()
	var errs []error
	grace, cancel := context.WithTimeout(context.Background(), s.grace)
	defer cancel()
	for _, srv := range servers {
		if err := srv.Shutdown(grace); err != nil && !errors.Is(err, context.DeadlineExceeded) {
			errs = append(errs, fmt.Errorf("shut down: %w", err))
		}
	}
	s.cancel()
	for _, srv := range servers {
		if err := srv.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close: %w", err))
		}
	}
	s.loops.Wait()
	return errors.Join(errs...)
}
