package gate_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/compose"
	"github.com/mcp-elicitation/elicitation/internal/proxy/config"
	"github.com/mcp-elicitation/elicitation/internal/proxy/gate"
)

// TestEmbeddedServiceHasTheServersLimits: the embedded service runs on the
// local server's lifecycle, so its review listener (its only one: the gate
// calls the service in process) refuses a body past --max-body and cuts
// off a body that stops arriving at the read timeout (before, it had
// neither the body limit nor the read and write timeouts).
func TestEmbeddedServiceHasTheServersLimits(t *testing.T) {
	t.Parallel()
	s := compose.Defaults()
	s.MaxBody = 400 << 10
	s.ReadTimeout = 300 * time.Millisecond
	emb, err := gate.StartEmbedded(context.Background(), gate.EmbeddedOptions{
		Config:   &config.EmbeddedService{Listen: "127.0.0.1:0", DataDir: t.TempDir()},
		Settings: &s,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer emb.Close()
	review := emb.ReviewBase + "/review/id/key"
	for _, u := range []string{review} {
		res, err := http.Post(u, "application/json", strings.NewReader(strings.Repeat("x", 500<<10)))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusRequestEntityTooLarge {
			t.Errorf("POST %s with 500 KiB past a 400 KiB limit: %d, want 413", u, res.StatusCode)
		}
	}
	for _, u := range []string{review} {
		host := strings.TrimPrefix(u, "http://")
		host, path, _ := strings.Cut(host, "/")
		conn, err := net.Dial("tcp", host)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(conn, "POST /%s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{", path, host)
		_ = conn.SetReadDeadline(time.Now().Add(time.Minute)) // a safety net, far past the timeout
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			_, err = conn.Read(make([]byte, 1))
		}
		conn.Close()
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			t.Errorf("POST %s with a stalled body: still open after a minute against a 300 ms read timeout", u)
		}
	}
}
