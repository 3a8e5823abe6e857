package mcptools_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/mcptools"
)

func tryConnect(e *env) (*mcp.ClientSession, error) {
	client := mcp.NewClient(&mcp.Implementation{Name: "sessions-test", Version: "1"}, nil)
	tr := &mcp.StreamableClientTransport{
		Endpoint: e.servers[0].URL + "/mcp", HTTPClient: &http.Client{Transport: roundTrip{e: e}},
		DisableStandaloneSSE: true, MaxRetries: -1,
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return client.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
}

// TestSessionCap: past MaxSessions open sessions, an initialize is refused
// with a sentence saying why and what to do, while the open sessions keep
// working; a closed session makes room.
func TestSessionCap(t *testing.T) {
	e := newEnv(t, envOptions{maxSessions: 3, sessionIdle: -1})
	var open []*mcp.ClientSession
	for range 3 {
		cs, err := tryConnect(e)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cs.Close() })
		open = append(open, cs)
	}
	_, err := tryConnect(e)
	if err == nil || !strings.Contains(err.Error(), "Service Unavailable") {
		t.Fatalf("a fourth session: %v, want 503", err)
	}
	// The refusal says what happened, to a client that reads the body.
	res, err := http.Post(e.servers[0].URL+"/mcp", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	body := read(t, res)
	if res.StatusCode != http.StatusServiceUnavailable || res.Header.Get("Retry-After") == "" || !strings.Contains(body, "too many open MCP sessions: this server keeps at most 3") {
		t.Errorf("refusal %d %q", res.StatusCode, body)
	}
	// Open sessions are not affected.
	ok(t, open[0], mcptools.ToolApproval, map[string]any{"message": "m", "context": 1})
	// Closing one (DELETE) makes room for another.
	if err := open[1].Close(); err != nil {
		t.Fatal(err)
	}
	cs, err := tryConnect(e)
	if err != nil {
		t.Fatalf("after a session closed: %v", err)
	}
	_ = cs.Close()
}

// TestSessionIdle: a session that receives no request for SessionIdle is
// closed, which frees its place under the cap.
func TestSessionIdle(t *testing.T) {
	e := newEnv(t, envOptions{maxSessions: 1, sessionIdle: 300 * time.Millisecond})
	cs, err := tryConnect(e)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		// Refused while the first session lives; accepted once it idled out.
		next, err := tryConnect(e)
		if err == nil {
			_ = next.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the idle session never closed: %v", err)
		}
		time.Sleep(50 * time.Millisecond) // polling a timer-driven close
	}
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: mcptools.ToolStatus, Arguments: map[string]any{"elicitationId": "x"}}); err == nil {
		t.Error("the idled-out session still answers")
	}
}

// TestBodyLimit: a body beyond MaxBodyBytes is refused with 413 on both
// the session and the sessionless path.
func TestBodyLimit(t *testing.T) {
	e := newEnv(t, envOptions{maxBody: 64 << 10})
	big := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"elicit_status","arguments":{"elicitationId":"` + strings.Repeat("x", 70<<10) + `"}}}`
	for _, version := range []string{"", mcptools.FirstSessionlessVersion} {
		req, _ := http.NewRequest("POST", e.servers[0].URL+"/mcp", strings.NewReader(big))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if version != "" {
			req.Header.Set("Mcp-Protocol-Version", version)
			req.Header.Set("Mcp-Method", "tools/call")
			req.Header.Set("Mcp-Name", "elicit_status")
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		read(t, res)
		if res.StatusCode != http.StatusRequestEntityTooLarge {
			t.Errorf("protocol %q: a %d-byte body got %d, want 413", version, len(big), res.StatusCode)
		}
	}
}

func read(t *testing.T, res *http.Response) string {
	t.Helper()
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
