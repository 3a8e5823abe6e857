package gate_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/proxy/config"
	"github.com/mcp-elicitation/elicitation/internal/proxy/gate"
	"github.com/mcp-elicitation/elicitation/internal/proxy/plan"
	"github.com/mcp-elicitation/elicitation/internal/signing"
	"github.com/mcp-elicitation/elicitation/internal/testenv"
	"github.com/mcp-elicitation/elicitation/receipt"
)

type env struct {
	local *Local
	gate  *gate.Gate
	log   *testenv.SyncBuffer
}

// newEnv builds a gate over a real local elicitation service; tools is the
// YAML of the configuration's tools and policies sections.
func newEnv(t *testing.T, rest string, upstream gate.Caller) *env {
	t.Helper()
	local := Start(t)
	yaml := "upstream:\n  command: node\nelicitation_service:\n  url: " + local.MCPURL + "\n  wait_seconds: 1\n" + rest
	cfg, err := config.ParseWith([]byte(yaml), config.Options{})
	if err != nil {
		t.Fatal(err)
	}
	svc := gate.NewMCPService(local.MCPURL, "", &mcp.Implementation{Name: "gate-test", Version: "1"})
	t.Cleanup(func() { _ = svc.Close() })
	log := &testenv.SyncBuffer{}
	g := gate.New(gate.Options{
		Config: cfg, Service: svc, Upstream: upstream,
		Matcher: plan.NewMatcher(config.SensitiveRequired{Enabled: true, DefaultMarkers: true}),
		Logger:  slog.New(slog.NewTextHandler(log, nil)),
	})
	return &env{local: local, gate: g, log: log}
}

func payload(t *testing.T, d gate.Decision) gate.Payload {
	t.Helper()
	if d.Result == nil {
		t.Fatalf("the call was forwarded with %s; want a gate result", d.Args)
	}
	if d.Result.IsError {
		t.Error("a gate result must be an ordinary tool result, not isError")
	}
	var p gate.Payload
	if err := json.Unmarshal(d.Result.StructuredContent.(json.RawMessage), &p); err != nil {
		t.Fatal(err)
	}
	text := d.Result.Content[0].(*mcp.TextContent).Text
	if text != string(d.Result.StructuredContent.(json.RawMessage)) {
		t.Errorf("text %s differs from the structured content", text)
	}
	return p
}

var rmTool = gate.Tool{Name: "delete_file", Description: "Deletes a file.", Properties: map[string]json.RawMessage{
	"path": json.RawMessage(`{"type":"string"}`), "api_key": json.RawMessage(`{"type":"string"}`),
}}

func check(t *testing.T, g *gate.Gate, tool gate.Tool, args string, host gate.Host) gate.Decision {
	t.Helper()
	d, err := g.Check(context.Background(), gate.Call{Tool: tool, Args: json.RawMessage(args), Host: host})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestConfirmOnTheReviewPage(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "tools:\n  delete_file:\n    confirm_if:\n      always: true\n", nil)
	args := `{"path":"/tmp/a","api_key":"sk-live-123"}`
	p := payload(t, check(t, e.gate, rmTool, args, nil))
	if p.Error != gate.ErrorPending || p.Status != "pending" || p.ReviewURL == "" || p.ElicitationID == "" || p.ArgumentsDigest == "" {
		t.Fatalf("first call: %+v", p)
	}
	// The reviewer sees the tool, its description, the exact arguments
	// with the secret masked, and the digest.
	ctx := e.local.Context(t, p.ReviewURL)
	a := ctx["arguments"].(map[string]any)
	if ctx["tool"] != "delete_file" || ctx["description"] != "Deletes a file." || a["path"] != "/tmp/a" || a["api_key"] != gate.Masked || ctx["argumentsDigest"] != p.ArgumentsDigest {
		t.Errorf("reviewer sees %v", ctx)
	}
	if strings.Contains(string(e.local.Payload(t, p.ReviewURL).Context), "sk-live-123") {
		t.Error("the secret reached the review request")
	}
	// The retry before the answer picks up the same review.
	again := payload(t, check(t, e.gate, rmTool, args, nil))
	if again.ElicitationID != p.ElicitationID {
		t.Errorf("retry asked again: %s, first %s", again.ElicitationID, p.ElicitationID)
	}
	e.local.Decide(t, p.ReviewURL, elicitation.DecisionSubmitted, nil)
	// Same arguments, other spelling: the approval binds to the values.
	d := check(t, e.gate, rmTool, `{ "api_key": "sk-live-123", "path": "/tmp/a" }`, nil)
	if d.Result != nil || string(d.Args) != `{ "api_key": "sk-live-123", "path": "/tmp/a" }` {
		t.Fatalf("approved retry: %+v", d)
	}
	// The approval's receipt names the tool and the digest of exactly the
	// arguments forwarded, secret included (the reviewer saw it masked).
	keys, err := receipt.FetchKeys(context.Background(), nil, e.local.Base+signing.JWKSPath)
	if err != nil {
		t.Fatal(err)
	}
	expect := receipt.Expect{Issuer: e.local.Base, Txn: p.ElicitationID, Outcome: receipt.OutcomeApproved, Tool: "delete_file", Arguments: d.Args}
	if _, err := receipt.Verify(d.Receipt, keys, expect); err != nil {
		t.Errorf("the approval's receipt: %v", err)
	}
	expect.Arguments = json.RawMessage(`{"path":"/tmp/a","api_key":"` + gate.Masked + `"}`)
	if _, err := receipt.Verify(d.Receipt, keys, expect); !errors.Is(err, receipt.ErrArguments) {
		t.Errorf("the receipt verified for the arguments the reviewer saw masked: %v", err)
	}
	// An approval is used once: the next identical call asks again.
	next := payload(t, check(t, e.gate, rmTool, args, nil))
	if next.Error != gate.ErrorPending || next.ElicitationID == p.ElicitationID {
		t.Errorf("after the approval was used: %+v", next)
	}
	logs := e.log.String()
	if !strings.Contains(logs, "decision=approved") || !strings.Contains(logs, p.ArgumentsDigest) || !strings.Contains(logs, "tool=delete_file") {
		t.Errorf("the decision is not logged with tool and digest:\n%s", logs)
	}
	if strings.Contains(logs, "/tmp/a") || strings.Contains(logs, "sk-live") {
		t.Errorf("argument values in the log:\n%s", logs)
	}
}

func TestConfirmChangedArgumentsAskAgain(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "tools:\n  delete_file:\n    confirm_if:\n      always: true\n", nil)
	p := payload(t, check(t, e.gate, rmTool, `{"path":"/tmp/a"}`, nil))
	e.local.Decide(t, p.ReviewURL, elicitation.DecisionSubmitted, nil)
	q := payload(t, check(t, e.gate, rmTool, `{"path":"/etc/passwd"}`, nil))
	if q.Error != gate.ErrorPending || q.ElicitationID == p.ElicitationID || q.ArgumentsDigest == p.ArgumentsDigest {
		t.Fatalf("changed arguments: %+v (first %+v)", q, p)
	}
	// The first approval still stands for its own arguments.
	if d := check(t, e.gate, rmTool, `{"path":"/tmp/a"}`, nil); d.Result != nil {
		t.Errorf("the approved arguments were not forwarded: %+v", payload(t, d))
	}
}

func TestConfirmDeclined(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "tools:\n  delete_file:\n    confirm_if:\n      always: true\n", nil)
	p := payload(t, check(t, e.gate, rmTool, `{"path":"/tmp/a"}`, nil))
	e.local.DecideWithComment(t, p.ReviewURL, elicitation.DecisionDeclined, "use the trash instead", nil)
	q := payload(t, check(t, e.gate, rmTool, `{"path":"/tmp/a"}`, nil))
	if q.Error != gate.ErrorBlocked || q.Status != gate.StatusReject || q.Reason != gate.ReasonConfirmationDeclined || q.ElicitationID != p.ElicitationID {
		t.Errorf("declined: %+v", q)
	}
	if q.Comment == nil || *q.Comment != "use the trash instead" {
		t.Errorf("the reviewer's comment is not passed on: %+v", q)
	}
	// The comment is a sentence of its own: a full stop ends it before the
	// advice that follows.
	if want := "The tool delete_file was not called: the reviewer declined it. Their comment: use the trash instead. Do not retry it unchanged; ask the user how to proceed."; q.Message != want {
		t.Errorf("message\n %q\nwant\n %q", q.Message, want)
	}
	if strings.Contains(e.log.String(), "trash") {
		t.Error("the comment reached the proxy's log")
	}
}

// An answer that lands while the call waits is acted on in the same call.
func TestConfirmAnswerWhileWaiting(t *testing.T) {
	t.Parallel()
	local := Start(t)
	cfg, err := config.ParseWith([]byte("upstream:\n  command: node\nelicitation_service:\n  url: "+local.MCPURL+"\n  wait_seconds: 60\ntools:\n  delete_file:\n    confirm_if:\n      always: true\n"), config.Options{})
	if err != nil {
		t.Fatal(err)
	}
	svc := gate.NewMCPService(local.MCPURL, "", &mcp.Implementation{Name: "t", Version: "1"})
	defer svc.Close()
	g := gate.New(gate.Options{Config: cfg, Service: svc})
	done := make(chan gate.Decision, 1)
	go func() {
		d, _ := g.Check(context.Background(), gate.Call{Tool: rmTool, Args: json.RawMessage(`{"path":"/x"}`)})
		done <- d
	}()
	local.WaitCreated(t)
	select {
	case d := <-done:
		t.Fatalf("returned before the answer: %+v", d)
	case <-time.After(300 * time.Millisecond):
	}
	local.DecideLatest(t, elicitation.DecisionSubmitted)
	select {
	case d := <-done:
		if d.Result != nil {
			t.Fatalf("not forwarded: %s", d.Result.Content[0].(*mcp.TextContent).Text)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the waiting call did not wake on the answer")
	}
}

func TestConfirmDestructivePolicy(t *testing.T) {
	t.Parallel()
	tr, fa := true, false
	e := newEnv(t, "policies:\n  confirm_destructive:\n    enabled: true\n", nil)
	for _, tt := range []struct {
		name string
		ann  *mcp.ToolAnnotations
		gate bool
	}{
		{"no annotations (the spec's defaults: may destroy)", nil, true},
		{"destructiveHint true", &mcp.ToolAnnotations{DestructiveHint: &tr}, true},
		{"destructiveHint false", &mcp.ToolAnnotations{DestructiveHint: &fa}, false},
		{"readOnlyHint true", &mcp.ToolAnnotations{ReadOnlyHint: true, DestructiveHint: &tr}, false},
		{"only a title (destructiveHint defaults to true)", &mcp.ToolAnnotations{Title: "x"}, true},
	} {
		tool := gate.Tool{Name: "t_" + strings.Fields(tt.name)[0], Annotations: tt.ann}
		d := check(t, e.gate, tool, `{}`, nil)
		if (d.Result != nil) != tt.gate {
			t.Errorf("%s: gated = %v, want %v", tt.name, d.Result != nil, tt.gate)
		}
	}
}

func TestConfirmArgumentConditions(t *testing.T) {
	t.Parallel()
	e := newEnv(t, `tools:
  delete_file:
    confirm_if:
      arguments:
        - {field: path, matches: "^/etc/"}
        - {field: size, above: 100}
        - {field: env, equals: [prod, 3]}
        - {field: force, present: true}
`, nil)
	for _, tt := range []struct {
		args string
		gate bool
	}{
		{`{"path":"/tmp/x"}`, false},
		{`{"path":"/etc/x"}`, true},
		{`{"size":100}`, false},
		{`{"size":100.5}`, true},
		{`{"size":"1000"}`, false},
		{`{"env":"prod"}`, true},
		{`{"env":"Prod"}`, false},
		{`{"env":3.0}`, true},
		{`{"force":false}`, true},
		{`{"force":""}`, false},
		{`{}`, false},
	} {
		d := check(t, e.gate, rmTool, tt.args, nil)
		if (d.Result != nil) != tt.gate {
			t.Errorf("%s: gated = %v, want %v", tt.args, d.Result != nil, tt.gate)
		}
	}
}

// host is a client's form elicitation, answering as scripted and recording
// what it was asked.
type host struct {
	mu     sync.Mutex
	asked  []*mcp.ElicitParams
	answer func(*mcp.ElicitParams) (*mcp.ElicitResult, error)
}

func (h *host) Elicit(_ context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	h.mu.Lock()
	h.asked = append(h.asked, p)
	h.mu.Unlock()
	return h.answer(p)
}

func TestConfirmThroughTheHost(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "tools:\n  delete_file:\n    confirm_if:\n      always: true\n", nil)
	h := &host{answer: func(*mcp.ElicitParams) (*mcp.ElicitResult, error) { return &mcp.ElicitResult{Action: "accept"}, nil }}
	d := check(t, e.gate, rmTool, `{"path":"/tmp/a","api_key":"sk-1"}`, h)
	if d.Result != nil {
		t.Fatalf("approved on the host but not forwarded")
	}
	if len(h.asked) != 1 || !strings.Contains(h.asked[0].Message, "delete_file") || !strings.Contains(h.asked[0].Message, "/tmp/a") || strings.Contains(h.asked[0].Message, "sk-1") {
		t.Errorf("host asked %+v", h.asked)
	}
	if ids := e.local.Created(); len(ids) != 0 {
		t.Errorf("a review page was created too: %v", ids)
	}
	h.answer = func(*mcp.ElicitParams) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "decline", Content: map[string]any{"comment": "not that one"}}, nil
	}
	p := payload(t, check(t, e.gate, rmTool, `{"path":"/tmp/a"}`, h))
	if p.Reason != gate.ReasonConfirmationDeclined || p.Comment == nil || *p.Comment != "not that one" || !strings.Contains(p.Message, "Their comment: not that one. Do not retry") {
		t.Errorf("declined on the host: %+v", p)
	}
}

func TestNoGateKeysForwardUntouched(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "", nil)
	args := `{"path": "/etc/x",  "force": true}`
	if e.gate.Active("delete_file") {
		t.Error("active without gate keys")
	}
	if d := check(t, e.gate, rmTool, args, nil); d.Result != nil || string(d.Args) != args {
		t.Errorf("changed: %+v", d)
	}
}

// Retries racing for one approval: exactly one of them forwards.
func TestConfirmRacingRetriesForwardOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "tools:\n  delete_file:\n    confirm_if:\n      always: true\n", nil)
	args := `{"path":"/tmp/a"}`
	p := payload(t, check(t, e.gate, rmTool, args, nil))
	e.local.Decide(t, p.ReviewURL, elicitation.DecisionSubmitted, nil)
	const n = 8
	var wg sync.WaitGroup
	forwarded := make(chan bool, n)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d, err := e.gate.Check(context.Background(), gate.Call{Tool: rmTool, Args: json.RawMessage(args)})
			if err != nil {
				t.Error(err)
				return
			}
			forwarded <- d.Result == nil
		}()
	}
	wg.Wait()
	close(forwarded)
	count := 0
	for f := range forwarded {
		if f {
			count++
		}
	}
	if count != 1 {
		t.Errorf("%d of %d racing retries forwarded, want exactly 1", count, n)
	}
}

// Without an elicitation service and without a host that can show a
// form, a gated call is refused with a structured result, never forwarded.
func TestConfirmWithoutAnyChannel(t *testing.T) {
	t.Parallel()
	cfg, err := config.ParseWith([]byte("upstream:\n  command: node\ntools:\n  delete_file:\n    confirm_if:\n      always: true\n"), config.Options{})
	if err != nil {
		t.Fatal(err)
	}
	g := gate.New(gate.Options{Config: cfg})
	p := payload(t, check(t, g, rmTool, `{"path":"/x"}`, nil))
	if p.Error != gate.ErrorRequired || p.Status != gate.StatusNeeds || p.Reason != gate.ReasonConfirmationRequired {
		t.Errorf("%+v", p)
	}
}

// An elicitation service that cannot be reached fails the call at once
// with a structured result.
func TestServiceDown(t *testing.T) {
	t.Parallel()
	port := testenv.FreePort(t)
	url := "http://127.0.0.1:" + strconv.Itoa(port) + "/mcp"
	cfg, err := config.ParseWith([]byte("upstream:\n  command: node\nelicitation_service:\n  url: "+url+"\ntools:\n  delete_file:\n    confirm_if:\n      always: true\n"), config.Options{})
	if err != nil {
		t.Fatal(err)
	}
	svc := gate.NewMCPService(url, "", &mcp.Implementation{Name: "t", Version: "1"})
	defer svc.Close()
	g := gate.New(gate.Options{Config: cfg, Service: svc})
	p := payload(t, check(t, g, rmTool, `{"path":"/x"}`, nil))
	if p.Error != gate.ErrorRequired || p.Status != gate.StatusFailed || p.Reason != gate.ReasonReviewFailed {
		t.Errorf("%+v", p)
	}
	if strings.Contains(p.Message, "127.0.0.1") {
		t.Errorf("internal error text reached the agent: %s", p.Message)
	}
}

// With none of the gate's keys set there is no gate: the proxy is the
// original.
func TestOpenWithoutGateKeys(t *testing.T) {
	t.Parallel()
	cfg, err := config.ParseWith([]byte("upstream:\n  command: node\nelicitation:\n  fallback_on_unsupported: structured_error\ntools:\n  echo:\n    required: [message]\n    confirm_if:\n    ambiguous_if:\n"), config.Options{})
	if err != nil {
		t.Fatal(err)
	}
	g, closer, err := gate.Open(context.Background(), cfg, gate.OpenOptions{})
	if err != nil || g != nil || closer == nil {
		t.Fatalf("Open = %v, %v, %v; want no gate", g, closer, err)
	}
	if err := closer.Close(); err != nil {
		t.Error(err)
	}
}
