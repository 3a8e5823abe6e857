//go:build unix

package lambdatest_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/conformancetest"
	"github.com/mcp-elicitation/elicitation/internal/lambdatest"
	"github.com/mcp-elicitation/elicitation/internal/mcptools/pushtest"
	"github.com/mcp-elicitation/elicitation/internal/mcptools/tasktest"
	"github.com/mcp-elicitation/elicitation/internal/testenv"
)

// TestErasOnLambda: the MCP function under the emulator, behind a stand-in
// for API Gateway, serves every era statelessly to the go-sdk client: the
// same results everywhere, the 2026-07-28 push (with the stack's
// push-state secret), nothing pushed to the session eras; the review page
// and the submission go through their own functions.
func TestErasOnLambda(t *testing.T) {
	testenv.Slow(t, "Lambda emulator")
	t.Parallel()
	var s *stack
	gw := lambdatest.Gateway(t, func(method, path string) (string, *lambdatest.Function) {
		switch {
		case path == "/mcp":
			return "ANY /mcp", s.fn["mcp"]
		case method == http.MethodGet && strings.HasPrefix(path, "/review/"):
			return "GET /review/{id}/{key}", s.fn["review"]
		case method == http.MethodPost && strings.HasPrefix(path, "/review/"):
			return "POST /review/{id}/{key}", s.fn["submit"]
		}
		return "", nil
	})
	s = newStack(t, stackOptions{extraEnv: []string{"ELICITATION_PUBLIC_URL=" + gw.URL}})
	pushtest.Run(t, pushtest.Target{
		MCPURL:          gw.URL + "/mcp",
		Header:          http.Header{"Authorization": {"Bearer " + s.keys["alice"]}},
		SessionlessPush: true,
	})
}

// TestConformanceOnLambda runs the official MCP conformance suite (every
// server scenario of the 2025-11-25 and 2026-07-28 requirement sets)
// against the MCP function under the emulator, behind the API Gateway stand-in,
// with an API key (the suite's client sends no Authorization header: the
// gateway adds alice's). The stateless function has no sessions, by design.
func TestConformanceOnLambda(t *testing.T) {
	testenv.Slow(t, "Lambda emulator")
	t.Parallel()
	var s *stack
	gw := lambdatest.Gateway(t, func(_, path string) (string, *lambdatest.Function) {
		if path == "/mcp" {
			return "ANY /mcp", s.fn["mcp"]
		}
		return "", nil
	})
	s = newStack(t, stackOptions{})
	authed := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Header.Set("Authorization", "Bearer "+s.keys["alice"])
		u, _ := url.Parse(gw.URL)
		httputil.NewSingleHostReverseProxy(u).ServeHTTP(w, r)
	}))
	t.Cleanup(authed.Close)
	const whySession = "the stateless function has no sessions, by design"
	const whyPublic = "the function is served under API Gateway's public domain, not on localhost: DNS rebinding turns a browser against a server on localhost, and every request here must carry an API key anyway"
	for _, rev := range []string{conformancetest.Rev20251125, conformancetest.Rev20260728} {
		known := conformancetest.Product(rev).With(conformancetest.Known{
			"dns-rebinding-protection/localhost-host-rebinding-rejected": whyPublic,
		})
		if rev == conformancetest.Rev20251125 {
			known = known.With(conformancetest.Known{
				"server-sse-multiple-streams/server-sse-multiple-streams-session": whySession,
				"server-sse-polling/server-sse-polling-session":                   whySession,
			})
		}
		t.Run(rev, func(t *testing.T) { conformancetest.Run(t, authed.URL+"/mcp", rev, known) })
	}
}

// TestListenOnLambda: a 2026-07-28 subscriptions/listen (which a client
// opens only where listChanged is advertised, and this server advertises
// none) is answered and ended at once by the MCP function: it does not
// hold the invocation to its timeout.
func TestListenOnLambda(t *testing.T) {
	testenv.Slow(t, "Lambda emulator")
	t.Parallel()
	var s *stack
	gw := lambdatest.Gateway(t, func(_, path string) (string, *lambdatest.Function) {
		if path == "/mcp" {
			return "ANY /mcp", s.fn["mcp"]
		}
		return "", nil
	})
	s = newStack(t, stackOptions{})
	const listen = `{"jsonrpc":"2.0","id":7,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true,"promptsListChanged":true},"_meta":{"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"x","version":"1"},"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`
	req, _ := http.NewRequest(http.MethodPost, gw.URL+"/mcp", strings.NewReader(listen))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "subscriptions/listen")
	req.Header.Set("Authorization", "Bearer "+s.keys["alice"])
	start := time.Now()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !strings.Contains(string(body), `"id":7,"result":{"resultType":"complete"`) {
		t.Fatalf("listen answered %d %q, want its result", res.StatusCode, body)
	}
	// The function's own report: the invocation ended, far from its 28 s.
	if ds := s.fn["mcp"].Durations(); len(ds) == 0 || ds[len(ds)-1] > 10*time.Second {
		t.Errorf("invocation durations %v (round trip %v)", ds, time.Since(start))
	}
}

// TestTasksOnLambda: MCP Tasks of both flavours from the MCP function under
// the emulator, behind the API Gateway stand-in: each task is created by
// one invocation and polled, updated, cancelled and read by others that
// hold nothing of it, decided through the review and submit functions;
// another principal's task does not exist for them.
func TestTasksOnLambda(t *testing.T) {
	testenv.Slow(t, "Lambda emulator and DynamoDB Local")
	t.Parallel()
	var s *stack
	gw := lambdatest.Gateway(t, func(method, path string) (string, *lambdatest.Function) {
		switch {
		case path == "/mcp":
			return "ANY /mcp", s.fn["mcp"]
		case method == http.MethodGet && strings.HasPrefix(path, "/review/"):
			return "GET /review/{id}/{key}", s.fn["review"]
		case method == http.MethodPost && strings.HasPrefix(path, "/review/"):
			return "POST /review/{id}/{key}", s.fn["submit"]
		}
		return "", nil
	})
	s = newStack(t, stackOptions{extraEnv: []string{"ELICITATION_PUBLIC_URL=" + gw.URL}})
	tasktest.Run(t, tasktest.Target{
		MCPURL:   gw.URL + "/mcp",
		Alice:    http.Header{"Authorization": {"Bearer " + s.keys["alice"]}},
		Bob:      http.Header{"Authorization": {"Bearer " + s.keys["bob"]}},
		URLInput: true,
	})
	// What a host's polling costs: the function's own REPORT durations of
	// tasks/get on a waiting task (docs/benchmarks.md prices them).
	c := tasktest.Connect(t, tasktest.Options{URL: gw.URL + "/mcp", Header: http.Header{"Authorization": {"Bearer " + s.keys["alice"]}}, Version: tasktest.Ext, Caps: tasktest.ExtCaps})
	res, e := c.Start("elicit_approval", map[string]any{"message": "m", "context": 1}, "")
	if e != nil {
		t.Fatal(e)
	}
	id, _ := res["taskId"].(string)
	const polls = 30
	before := len(s.fn["mcp"].Durations())
	for range polls {
		if got := c.Must("tasks/get", id); got["status"] != "working" {
			t.Fatalf("poll: %v", got)
		}
	}
	// The emulator logs an invocation's REPORT line as it ends, just after
	// the response: read until all are in.
	ds := s.fn["mcp"].Durations()[before:]
	for deadline := time.Now().Add(5 * time.Second); len(ds) < polls && time.Now().Before(deadline); ds = s.fn["mcp"].Durations()[before:] {
		time.Sleep(20 * time.Millisecond)
	}
	if len(ds) != polls {
		t.Fatalf("%d REPORT lines for %d polls", len(ds), polls)
	}
	slices.Sort(ds)
	t.Logf("tasks/get of a waiting task, %d invocations: p50 %v, p90 %v, max %v", polls, ds[polls/2], ds[polls*9/10], ds[polls-1])
}
