package mcptools_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/boltstore"
	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/mcptools"
)

// lockedBuffer is a log destination the server's goroutines share.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestSDKLinesAtDebug: the go-sdk's lines for each client session
// (connected, initialized) are logged at Debug, so a server logging at
// Info does not show them; at Debug they are there.
func TestSDKLinesAtDebug(t *testing.T) {
	t.Parallel()
	for _, level := range []slog.Level{slog.LevelInfo, slog.LevelDebug} {
		t.Run(level.String(), func(t *testing.T) {
			t.Parallel()
			st, err := boltstore.Open(filepath.Join(t.TempDir(), "store.db"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = st.Close() })
			var out lockedBuffer
			srv := mcptools.New(mcptools.Options{
				Service:   elicitation.NewService(elicitation.Config{Store: st}),
				ReviewURL: reviewURL,
				Logger:    slog.New(slog.NewTextHandler(&out, &slog.HandlerOptions{Level: level})),
			})
			ts := httptest.NewServer(srv.Handler())
			t.Cleanup(ts.Close)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			client := mcp.NewClient(&mcp.Implementation{Name: "sdklog-test", Version: "1"}, nil)
			cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp", DisableStandaloneSSE: true, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-06-18"})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := cs.ListTools(ctx, nil); err != nil {
				t.Fatal(err)
			}
			_ = cs.Close()
			log := out.String()
			if level == slog.LevelInfo && strings.Contains(log, "session") {
				t.Fatalf("at Info the log shows the SDK's session lines:\n%s", log)
			}
			if level == slog.LevelDebug && !strings.Contains(log, "level=DEBUG msg=\"session initialized\"") {
				t.Fatalf("at Debug the log lacks the SDK's session lines at DEBUG:\n%s", log)
			}
		})
	}
}
