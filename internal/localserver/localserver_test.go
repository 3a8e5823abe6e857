package localserver_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/compose"
	"github.com/mcp-elicitation/elicitation/internal/localserver"
)

// limits are short listener limits for the tests.
func limits() compose.Settings {
	s := compose.Defaults()
	s.MaxBody = 1000
	s.ReadTimeout = 300 * time.Millisecond
	s.IdleTimeout = time.Second
	return s
}

// echo answers with the length of the body it read, or the error: 413
// past the limit (as every handler of ours maps it), else 400.
func echo(w http.ResponseWriter, r *http.Request) {
	b, err := io.ReadAll(r.Body)
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		http.Error(w, err.Error(), http.StatusRequestEntityTooLarge)
		return
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	fmt.Fprint(w, len(b))
}

func start(t *testing.T, o localserver.Options, h http.Handler) (*localserver.Server, string) {
	t.Helper()
	ln, err := localserver.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := localserver.New(o)
	srv.Serve(ln, h)
	t.Cleanup(func() { _ = srv.Close() })
	return srv, ln.Addr().String()
}

// TestEveryListenerGetsTheLimits: a body past MaxBody is refused with 413
// (with a length and chunked), and a body that stops arriving is cut off by
// the read timeout: the connection ends without the body read.
func TestEveryListenerGetsTheLimits(t *testing.T) {
	t.Parallel()
	_, addr := start(t, localserver.Options{Settings: limits()}, http.HandlerFunc(echo))
	for _, chunked := range []bool{false, true} {
		var body io.Reader = strings.NewReader(strings.Repeat("x", 2000))
		if chunked {
			body = io.MultiReader(body)
		}
		res, err := http.Post("http://"+addr+"/", "text/plain", body)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusRequestEntityTooLarge {
			t.Errorf("2000 bytes past a 1000-byte limit (chunked %v): %d, want 413", chunked, res.StatusCode)
		}
	}
	res, err := http.Post("http://"+addr+"/", "text/plain", strings.NewReader("hello"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || string(b) != "5" {
		t.Errorf("a small body: %d %q", res.StatusCode, b)
	}

	// A body that promises 100 bytes and sends one: the server gives up
	// at the read timeout, answers and closes; the client only waits for it.
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 100\r\n\r\nx")
	_ = conn.SetReadDeadline(time.Now().Add(time.Minute)) // a safety net, far past the timeout
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to a stalled body: %v", err)
	}
	rest, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(rest), "timeout") {
		t.Errorf("a stalled body: %d %q, want 400 with the read's timeout", resp.StatusCode, rest)
	}
	if _, err := conn.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
		t.Errorf("the connection of a stalled body stays open: %v", err)
	}
}

// TestCloseEndsRequestsAfterGrace: Close lets a request in flight run for
// the grace period, then ends its context, and returns.
func TestCloseEndsRequestsAfterGrace(t *testing.T) {
	t.Parallel()
	entered, ended := make(chan struct{}), make(chan error, 1)
	srv, addr := start(t, localserver.Options{Settings: limits(), Grace: 100 * time.Millisecond}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(entered)
		<-r.Context().Done()
		ended <- r.Context().Err()
	}))
	go func() {
		if res, err := http.Get("http://" + addr + "/"); err == nil {
			res.Body.Close()
		}
	}()
	<-entered
	if err := srv.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := <-ended; !errors.Is(err, context.Canceled) {
		t.Errorf("the open request's context: %v", err)
	}
	if _, err := http.Get("http://" + addr + "/"); err == nil {
		t.Error("the listener still accepts after Close")
	}
}

type countingStore struct {
	calls atomic.Int64
	pass  chan struct{}
}

func (s *countingStore) Cleanup(ctx context.Context, now time.Time) (int, error) {
	s.calls.Add(1)
	select {
	case s.pass <- struct{}{}:
	case <-ctx.Done():
	}
	return 0, nil
}

// TestLoopsEndWithClose: the cleanup loop makes its first pass at once and
// every loop has ended when Close returns; a loop started after Close does
// not run.
func TestLoopsEndWithClose(t *testing.T) {
	t.Parallel()
	srv := localserver.New(localserver.Options{Settings: limits()})
	store := &countingStore{pass: make(chan struct{})}
	srv.Cleanup(store, time.Hour, time.Now)
	<-store.pass // the first pass, before any tick
	var other atomic.Bool
	srv.Go(func(ctx context.Context) {
		<-ctx.Done()
		other.Store(true)
	})
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	if !other.Load() {
		t.Error("Close returned before a loop ended")
	}
	if n := store.calls.Load(); n != 1 {
		t.Errorf("cleanup passes: %d, want 1 (the interval is an hour)", n)
	}
	ran := false
	srv.Go(func(context.Context) { ran = true })
	if ran {
		t.Error("a loop ran after Close")
	}
}

// TestFailedListener: a listener that stops on its own is reported.
func TestFailedListener(t *testing.T) {
	t.Parallel()
	ln, err := localserver.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := localserver.New(localserver.Options{Settings: limits()})
	defer srv.Close()
	_ = ln.Close()
	srv.Serve(ln, http.NotFoundHandler())
	if err := <-srv.Failed(); err == nil || !strings.Contains(err.Error(), "serve on") {
		t.Errorf("Failed: %v", err)
	}
}

func TestListenNamesTheAddress(t *testing.T) {
	ln, err := localserver.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if _, err := localserver.Listen(ln.Addr().String()); err == nil || !strings.Contains(err.Error(), "listen on "+ln.Addr().String()) {
		t.Errorf("Listen on a taken port: %v", err)
	}
}
