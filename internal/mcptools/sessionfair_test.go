package mcptools_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestSessionFairShare: with keys and a cap below the default share (as
// --require-api-key --mcp-max-sessions 20 is), one key opening sessions in
// a blink holds at most half the cap, so other keys still connect; a
// server full of two keys' sessions makes room for a third key (the
// idlest session of the key holding the most) rather than refusing it;
// the server is full for a newcomer only when no key holds more than one.
func TestSessionFairShare(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{maxSessions: 6, sessionIdle: -1, auth: map[string]string{"ta": "alice", "tb": "bob", "tc": "carol"}})
	for i := range 7 {
		if code, _, body := rawInitialize(t, e, "ta"); code != http.StatusOK {
			t.Fatalf("alice's initialize %d: %d %q", i, code, body)
		}
	}
	bob := []*mcp.ClientSession{mustConnect(t, e, "tb"), mustConnect(t, e, "tb"), mustConnect(t, e, "tb")}
	for i, cs := range bob {
		if err := statusErr(cs); err != nil {
			t.Fatalf("bob's session %d: %v", i, err)
		}
	}
	// Full: alice's three and bob's three. Carol gets alice's idlest place.
	e.settle()
	carol := mustConnect(t, e, "tc")
	for i, cs := range append(bob, carol) {
		if err := statusErr(cs); err != nil {
			t.Errorf("session %d after carol's: %v", i, err)
		}
		// Each call's last use is recorded before the next begins: the
		// server records it as the handler returns, after the client has
		// read the response, so on a busy machine bob[0]'s could otherwise
		// land after bob[1]'s.
		e.settle()
	}
	// A key at its share (half the cap) churns its own sessions: bob[0],
	// the idlest once his calls above are done.
	if code, _, body := rawInitialize(t, e, "tb"); code != http.StatusOK || statusErr(bob[0]) == nil {
		t.Errorf("bob's fourth initialize: %d %q, and his idlest session must have given way", code, body)
	}
}

// TestSessionFullForEqualShares: a full server where no principal holds
// more than a newcomer would refuses it (503) with the sentence.
func TestSessionFullForEqualShares(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{maxSessions: 2, sessionIdle: -1, auth: map[string]string{"ta": "alice", "tb": "bob", "tc": "carol"}})
	mustConnect(t, e, "ta")
	mustConnect(t, e, "tb")
	code, retry, body := rawInitialize(t, e, "tc")
	if code != http.StatusServiceUnavailable || retry == "" || !strings.Contains(body, "this MCP server is full: 2 sessions are open, its most (2), held by other clients (this client, carol, has 0 of its share of 1)") {
		t.Errorf("carol: %d (Retry-After %q) %q", code, retry, body)
	}
}

// TestSessionRefusedDeleteKeepsCount: a DELETE the SDK refuses (here for
// an unsupported protocol version header) closes nothing, so its session
// still counts against its principal's share: a key that opens sessions
// and sends each such a DELETE holds no more than its share, and a full
// server still makes room for another key, rather than one key holding
// every session uncounted and the others refused (503).
func TestSessionRefusedDeleteKeepsCount(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{maxSessions: 4, sessionIdle: -1, auth: map[string]string{"ta": "alice", "tb": "bob"}})
	for i := range 6 {
		req, _ := http.NewRequest(http.MethodPost, e.servers[0].URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer ta")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		sid := res.Header.Get("Mcp-Session-Id")
		if body := read(t, res); res.StatusCode != http.StatusOK || sid == "" {
			t.Fatalf("alice's initialize %d: %d %q", i, res.StatusCode, body)
		}
		del, _ := http.NewRequest(http.MethodDelete, e.servers[0].URL+"/mcp", nil)
		del.Header.Set("Authorization", "Bearer ta")
		del.Header.Set("Mcp-Session-Id", sid)
		del.Header.Set("Mcp-Protocol-Version", "1999-01-01")
		res, err = http.DefaultClient.Do(del)
		if err != nil {
			t.Fatal(err)
		}
		if body := read(t, res); res.StatusCode != http.StatusBadRequest {
			t.Fatalf("alice's DELETE with a version the server does not speak: %d %q, want 400", res.StatusCode, body)
		}
	}
	e.settle()
	if _, err := tryConnectAs(e, "tb"); err != nil {
		t.Fatalf("bob beside alice's sessions: %v, want room made (alice holds at most her share)", err)
	}
}
