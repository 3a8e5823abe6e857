package gate_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A JSON-RPC batch is refused on a session whose protocol has no batching
// (2025-06-18 and later), on stdio as over streamable HTTP, and nothing in
// it reaches the upstream; a 2025-03-26 session, whose protocol has
// batches, still gets them answered.
func TestBatchesAgreeOnStdioAndHTTP(t *testing.T) {
	t.Parallel()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	p := gatedProxy(t, fmt.Sprintf("upstream:\n  command: %q\n  env:\n    %s: \"1\"\n", self, stdioUpstreamEnv))
	const batch = `[{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"delete_file","arguments":{"path":"/x"}}}]`
	stdio := func(protocol string) *lines {
		cr, sw := io.Pipe()
		sr, cw := io.Pipe()
		ss, err := p.Server().Connect(context.Background(), p.WrapTransport(&mcp.IOTransport{Reader: sr, Writer: sw}), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = ss.Close() })
		c := &lines{t: t, w: cw, r: bufio.NewReader(cr)}
		c.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"` + protocol + `","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
		c.read()
		c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		return c
	}
	for _, protocol := range []string{"2025-06-18", "2025-11-25"} {
		c := stdio(protocol)
		c.send(batch)
		var resp struct {
			ID    json.RawMessage `json:"id"`
			Error struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		line := c.read()
		if err := json.Unmarshal([]byte(line), &resp); err != nil || string(resp.ID) != "null" || resp.Error.Code != -32600 ||
			resp.Error.Message != "JSON-RPC batching is not supported in 2025-06-18 and later (session version: "+protocol+")" {
			t.Errorf("stdio %s: a batch was answered with %s", protocol, line)
		}
		// The session goes on.
		c.send(`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"calls","arguments":{}}}`)
		if got := c.read(); !strings.Contains(got, `"id":8`) || strings.Contains(got, "delete_file") {
			t.Errorf("stdio %s: after the batch: %s (want no call upstream)", protocol, got)
		}
	}
	old := stdio("2025-03-26")
	old.send(batch)
	if got := old.read(); !strings.HasPrefix(got, "[") || !strings.Contains(got, "delete_file ran") {
		t.Errorf("stdio 2025-03-26: the batch got %s", got)
	}

	srv := httptest.NewServer(p.HTTPHandler())
	t.Cleanup(srv.Close)
	req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(batch))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), "JSON-RPC batching is not supported in 2025-06-18 and later") {
		t.Errorf("HTTP 2025-11-25: %s %s", resp.Status, b)
	}
}
