package proxy

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/proxy/config"
	"github.com/mcp-elicitation/elicitation/internal/testclock"
	"github.com/mcp-elicitation/elicitation/internal/testenv"
)

// TestReconnectLogWhileTheUpstreamComesUp: a URL upstream that is not
// listening yet, then answers 503, then serves MCP. At the proxy's default
// level (info) the log says once that it is not reachable and that the
// proxy keeps retrying, then only when the error changes or a minute has
// passed, then once that it connected: never an ERROR for each failed
// attempt, and never the URL's credentials.
func TestReconnectLogWhileTheUpstreamComesUp(t *testing.T) {
	t.Parallel()
	port := testenv.FreePort(t)
	clock := testclock.New(time.Date(2026, 12, 2, 4, 0, 0, 0, time.UTC))
	log := &testenv.SyncBuffer{}
	c, err := dialUpstream(context.Background(), upstreamOptions{
		Upstream: config.Upstream{URL: fmt.Sprintf("http://hunter2user:hunter2hunter2@127.0.0.1:%d/mcp?api_key=hunter2hunter2", port)},
		Logger:   slog.New(slog.NewTextHandler(log, nil)),
		Now:      clock.Now,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	// attempts waits for n more attempts of the reconnection loop (each
	// Ensure waits for one begun after it was called).
	attempts := func(n int) {
		t.Helper()
		for range n {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			_, _ = c.Ensure(ctx)
			err := ctx.Err()
			cancel()
			if err != nil {
				t.Fatalf("no reconnection attempt within 30 s\n%s", log.String())
			}
		}
	}
	warnings := func(n int) string {
		t.Helper()
		out, ok := log.WaitFor(30*time.Second, func(s string) bool {
			return strings.Count(s, "level=WARN") >= n || strings.Contains(s, "level=ERROR")
		})
		if !ok || strings.Contains(out, "level=ERROR") || strings.Count(out, "level=WARN") > n {
			t.Fatalf("want %d warnings and no error:\n%s", n, out)
		}
		return out
	}

	// Nothing listens: one warning, whatever the number of attempts.
	out := warnings(1)
	if !strings.Contains(out, "retrying") || !strings.Contains(out, "connection refused") {
		t.Errorf("the first failure does not say the proxy keeps retrying, or why it failed:\n%s", out)
	}
	attempts(3)
	// A minute on, the same error once more.
	clock.Add(time.Minute)
	attempts(1)
	out = warnings(2)
	if last := lastLine(out); !strings.Contains(last, "connection refused") || !strings.Contains(last, "retrying") {
		t.Errorf("the reminder a minute on: %s", last)
	}
	attempts(2)

	// The port answers, with an HTTP error: the error changed, so once more.
	var serving atomic.Bool
	up := mcp.NewServer(&mcp.Implementation{Name: "late", Version: "1"}, nil)
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return up }, nil)
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !serving.Load() {
			http.Error(w, "starting", http.StatusServiceUnavailable)
			return
		}
		mcpHandler.ServeHTTP(w, r)
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	attempts(1)
	out = warnings(3)
	if last := lastLine(out); strings.Contains(last, "connection refused") || !strings.Contains(last, "retrying") {
		t.Errorf("the changed error: %s", last)
	}
	attempts(2)

	// It serves MCP: connected, once, at INFO.
	serving.Store(true)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := c.Ensure(ctx); err != nil {
		t.Fatalf("Ensure once the upstream serves: %v\n%s", err, log.String())
	}
	out, ok := log.WaitFor(30*time.Second, func(s string) bool { return strings.Contains(s, `level=INFO msg="upstream connected"`) })
	if !ok {
		t.Fatalf("no INFO upstream connected:\n%s", out)
	}
	if n := strings.Count(out, "level=WARN"); n != 3 || strings.Contains(out, "level=ERROR") || strings.Count(out, "\n") != 4 {
		t.Errorf("want three warnings (the first failure, a minute on, the changed error) and the connection, nothing else:\n%s", out)
	}
	t.Log(out)
	if strings.Contains(out, "hunter2") {
		t.Errorf("the URL's credentials are in the log:\n%s", out)
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// TestRetryLogLevels: which failed attempts are warnings, step by step on
// the test clock.
func TestRetryLogLevels(t *testing.T) {
	t.Parallel()
	clock := testclock.New(time.Date(2026, 12, 2, 4, 0, 0, 0, time.UTC))
	type step struct {
		after time.Duration
		err   string
		want  slog.Level
	}
	for name, tc := range map[string]struct {
		first string // dialUpstream's failure, which dialUpstream itself logs; "" for a lost connection
		steps []step
	}{
		"the same error, a reminder a minute on": {"refused", []step{
			{time.Second, "refused", slog.LevelDebug}, {58 * time.Second, "refused", slog.LevelDebug},
			{time.Second, "refused", slog.LevelWarn}, {time.Second, "refused", slog.LevelDebug},
		}},
		"a changed error at once": {"refused", []step{
			{time.Second, "503", slog.LevelWarn}, {time.Second, "503", slog.LevelDebug},
		}},
		"two alternating errors, each once a minute": {"EOF", []step{
			{time.Second, "broken pipe", slog.LevelWarn}, {time.Second, "EOF", slog.LevelDebug},
			{time.Second, "broken pipe", slog.LevelDebug}, {time.Minute, "EOF", slog.LevelWarn},
			{time.Second, "broken pipe", slog.LevelWarn}, {time.Second, "EOF", slog.LevelDebug},
		}},
		"after a lost connection, the first failure": {"", []step{
			{time.Second, "refused", slog.LevelWarn}, {time.Second, "refused", slog.LevelDebug},
		}},
	} {
		t.Run(name, func(t *testing.T) {
			r := retryLog{now: clock.Now}
			r.begin(tc.first)
			var down time.Duration
			for i, s := range tc.steps {
				clock.Add(s.after)
				down += s.after
				if got, gotDown := r.failed(s.err); got != s.want || gotDown != down {
					t.Errorf("step %d (%s): %v, down %v; want %v, down %v", i, s.err, got, gotDown, s.want, down)
				}
			}
			if got := r.connected(); got != down {
				t.Errorf("connected after %v, want %v", got, down)
			}
		})
	}
}
