package mcptools_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/mcptools"
)

// TestAwaitLimits: waiting elicit_await calls are bounded per principal
// and in all, on the sessionless era and on sessions alike: a call past a
// limit is refused at once with busy and a sentence saying which limit is
// full and what to do; another principal is not held to the first one's
// share; a slot is free again once a wait returns.
func TestAwaitLimits(t *testing.T) {
	t.Parallel()
	for _, era := range []struct {
		name      string
		stateless bool
		version   string
	}{{"sessionless-2026-07-28", true, proto20260728}, {"session-2025-11-25", false, proto20251125}} {
		t.Run(era.name, func(t *testing.T) {
			e := newEnv(t, envOptions{stateless: era.stateless, maxWaits: 3, waitShare: 2, auth: map[string]string{"ta": "alice", "tb": "bob"}})
			alice, bob := e.connect(t, era.version, "ta"), e.connect(t, era.version, "tb")
			type waiting struct {
				created map[string]any
				done    <-chan callResult
			}
			var held []waiting
			wait := func(cs *mcp.ClientSession) {
				c := ok(t, cs, mcptools.ToolApproval, map[string]any{"message": "m", "context": 1})
				held = append(held, waiting{c, e.awaitAsync(t, cs, map[string]any{"elicitationId": c["elicitationId"], "waitSeconds": 20})})
			}
			wait(alice)
			wait(alice)
			extra := ok(t, alice, mcptools.ToolApproval, map[string]any{"message": "m", "context": 1})
			args := map[string]any{"elicitationId": extra["elicitationId"], "waitSeconds": 20}
			if got := fails(t, alice, mcptools.ToolAwait, args, elicitation.CodeBusy); !strings.Contains(got, "this client (alice) already has 2 elicit_await calls waiting") || !strings.Contains(got, "retry this one in a few seconds") {
				t.Errorf("alice past her share: %q", got)
			}
			wait(bob) // bob is not held to alice's share
			bobsNext := ok(t, bob, mcptools.ToolApproval, map[string]any{"message": "m", "context": 1})
			if got := fails(t, bob, mcptools.ToolAwait, map[string]any{"elicitationId": bobsNext["elicitationId"]}, elicitation.CodeBusy); !strings.Contains(got, "this server already holds 3 elicit_await calls waiting") {
				t.Errorf("bob with the server full: %q", got)
			}
			// elicit_status never waits, so it is never refused.
			ok(t, bob, mcptools.ToolStatus, map[string]any{"elicitationId": bobsNext["elicitationId"]})
			for _, h := range held {
				e.decide(t, h.created, elicitation.Submission{Decision: elicitation.DecisionSubmitted})
				if r := receive(t, h.done, 10*time.Second); r.structured["status"] != "submitted" {
					t.Errorf("a held wait: %+v", r)
				}
			}
			// The slots are free again.
			if out := ok(t, alice, mcptools.ToolAwait, map[string]any{"elicitationId": extra["elicitationId"], "waitSeconds": 0.1}); out["status"] != "pending" {
				t.Errorf("alice after the waits returned: %v", out)
			}
		})
	}
}

// watchEvents wraps a store so that a test learns when a wait (a Watch,
// Service.Await's) starts and when it ends.
type watchEvents struct {
	elicitation.Store
	started, returned chan string
}

func (w *watchEvents) Watch(id string, every func() time.Duration, wake func()) (stop func()) {
	unwatch := w.Store.Watch(id, every, wake)
	w.started <- id
	var once sync.Once
	return func() {
		unwatch()
		once.Do(func() { w.returned <- id })
	}
}

// TestAwaitClientGoesAway: a client that goes away while its elicit_await
// waits ends the wait and frees its slot at once (the cap of one lets the
// next call wait).
func TestAwaitClientGoesAway(t *testing.T) {
	t.Parallel()
	ws := &watchEvents{started: make(chan string, 16), returned: make(chan string, 16)}
	e := newRawEnv(t, 1, func(st elicitation.Store) elicitation.Store { ws.Store = st; return ws })
	c := pendingApproval(t, e.svc)
	post := func(ctx context.Context, id int, args string) ([]byte, error) {
		body := `{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"tools/call","params":{"name":"elicit_await","arguments":` + args + `,` +
			`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, e.url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", proto20260728)
		req.Header.Set("Mcp-Method", "tools/call")
		req.Header.Set("Mcp-Name", mcptools.ToolAwait)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, err
		}
		defer res.Body.Close()
		return io.ReadAll(res.Body)
	}
	cctx, cancel := context.WithCancel(context.Background())
	gone := make(chan error, 1)
	go func() {
		_, err := post(cctx, 1, `{"elicitationId":"`+c.State.ID+`","waitSeconds":30}`)
		gone <- err
	}()
	<-ws.started
	cancel()
	if err := <-gone; !errors.Is(err, context.Canceled) {
		t.Errorf("the client's call: %v", err)
	}
	select {
	case <-ws.returned:
	case <-time.After(10 * time.Second):
		t.Fatal("the wait did not end when its client went away")
	}
	// The slot is free: a wait on the same request is not refused (the
	// slot is given back just after the store's wait ends).
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, err := post(context.Background(), 2, `{"elicitationId":"`+c.State.ID+`","waitSeconds":0.05}`)
		if err == nil && bytes.Contains(b, []byte(`busy:`)) && time.Now().Before(deadline) {
			continue
		}
		if err != nil || !bytes.Contains(b, []byte(`"structuredContent":{"status":"pending"}`)) {
			t.Errorf("the next wait: %s %v", b, err)
		}
		break
	}
}
