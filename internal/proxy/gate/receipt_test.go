package gate_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/proxy"
	"github.com/mcp-elicitation/elicitation/internal/proxy/config"
	"github.com/mcp-elicitation/elicitation/internal/proxy/gate"
	"github.com/mcp-elicitation/elicitation/internal/proxy/plan"
	"github.com/mcp-elicitation/elicitation/internal/testenv"
	"github.com/mcp-elicitation/elicitation/receipt"
)

// receiptUpstream builds examples/receipt-upstream and runs it on a free
// loopback port, accepting the receipts of issuer; it returns its URL.
func receiptUpstream(t *testing.T, issuer string) string {
	t.Helper()
	testenv.Slow(t, "examples/receipt-upstream")
	bin := filepath.Join(t.TempDir(), "receipt-upstream")
	build := exec.Command("go", "build", "-o", bin, "./examples/receipt-upstream")
	build.Dir = testenv.Root(t)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./examples/receipt-upstream: %v\n%s", err, out)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
	cmd := exec.Command(bin, "-listen", addr, "-issuer", issuer)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stderr := &testenv.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = io.Discard, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("receipt-upstream:\n%s", stderr.String())
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			return "http://" + addr + "/mcp"
		}
		if time.Now().After(deadline) {
			t.Fatalf("receipt-upstream did not listen on %s: %s", addr, stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// metaTap sits in front of an upstream and keeps the _meta of each
// tools/call that reaches it.
type metaTap struct {
	mu    sync.Mutex
	metas []map[string]any
}

func (m *metaTap) front(t *testing.T, target string) string {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: u.Scheme, Host: u.Host})
	rp.FlushInterval = -1
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var msg struct {
			Method string `json:"method"`
			Params struct {
				Meta map[string]any `json:"_meta"`
			} `json:"params"`
		}
		if json.Unmarshal(body, &msg) == nil && msg.Method == "tools/call" {
			m.mu.Lock()
			m.metas = append(m.metas, msg.Params.Meta)
			m.mu.Unlock()
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + u.Path
}

// last is the receipt of the last call that reached the upstream, and how
// many calls did.
func (m *metaTap) last() (string, int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.metas) == 0 {
		return "", 0
	}
	r, _ := m.metas[len(m.metas)-1][receipt.MetaKey].(string)
	return r, len(m.metas)
}

// proxyWith serves the proxy in front of upstream (its URL, as the gate
// names it) with the gate over svc, on streamable HTTP, and returns an
// agent connected to it.
func proxyWith(t *testing.T, upstream, reach string, svc gate.Service, rest string) *mcp.ClientSession {
	t.Helper()
	cfg, err := config.ParseWith([]byte(fmt.Sprintf("upstream:\n  url: %q\nelicitation_service:\n  url: http://unused.invalid/mcp\n  wait_seconds: 1\n%s", upstream, rest)), config.Options{})
	if err != nil {
		t.Fatal(err)
	}
	proxyCfg := *cfg
	proxyCfg.Upstream.URL = reach
	log := &testenv.SyncBuffer{}
	logger := slog.New(slog.NewTextHandler(log, nil))
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the proxy's log:\n%s", log.String())
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	p, err := proxy.New(ctx, proxy.Options{Config: &proxyCfg, Logger: logger, Version: "test"})
	if err != nil {
		t.Fatalf("proxy.New: %v", err)
	}
	t.Cleanup(func() { _ = p.Close() })
	g := gate.New(gate.Options{Config: cfg, Service: svc, Upstream: p.CallUpstream, Logger: logger, Matcher: plan.NewMatcher(cfg.Policies.SensitiveRequired)})
	g.Install(p.Planner())
	srv := httptest.NewServer(p.HTTPHandler())
	t.Cleanup(srv.Close)
	return (&gated{url: srv.URL}).client(t, nil)
}

// callRaw calls tool on cs with meta and returns the first text and
// whether the result is an error.
func callRaw(t *testing.T, cs *mcp.ClientSession, tool string, args any, meta mcp.Meta) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Meta: meta, Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("tools/call %s: %v", tool, err)
	}
	text := ""
	if len(res.Content) > 0 {
		if tc, ok := res.Content[0].(*mcp.TextContent); ok {
			text = tc.Text
		}
	}
	return text, res.IsError
}

// The example upstream behind the real gate, with the embedded service
// called in process and with a service reached over MCP: a call approved
// on the review page runs, with a receipt for exactly its arguments; the
// same receipt sent with other arguments, sent again, or no receipt at
// all, is refused by the upstream itself; a declined call never reaches
// it; a receipt the agent puts in _meta is not passed on.
func TestReceiptUpstreamBehindTheGate(t *testing.T) {
	t.Parallel()
	local := Start(t)
	up := receiptUpstream(t, local.Base)
	const rest = "tools:\n  deploy:\n    confirm_if:\n      message: \"Deploy?\"\n      arguments:\n        - field: version\n          above: 1\n"
	for _, tc := range []struct {
		name string
		svc  func(t *testing.T) gate.Service
	}{
		{"embedded, in process", func(*testing.T) gate.Service {
			return local.Embedded.Service(elicitation.Client{Name: "proxy", Version: "test"})
		}},
		{"over MCP", func(t *testing.T) gate.Service {
			s := gate.NewMCPService(local.MCPURL, "", &mcp.Implementation{Name: "proxy", Version: "test"})
			t.Cleanup(func() { _ = s.Close() })
			return s
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tap := &metaTap{}
			agent := proxyWith(t, up, tap.front(t, up), tc.svc(t), rest)
			prod := map[string]any{"env": "prod", "version": 2}

			first := wantPending(t, call(t, agent, "deploy", prod))
			local.Decide(t, first.ReviewURL, elicitation.DecisionSubmitted, nil)
			if text, isErr := callRaw(t, agent, "deploy", prod, nil); isErr || text != "deployed version 2 to prod" {
				t.Fatalf("the approved call: %q (error %v)", text, isErr)
			}
			rcpt, n := tap.last()
			if rcpt == "" || n != 1 {
				t.Fatalf("the approved call reached the upstream %d times, with receipt %q", n, rcpt)
			}

			// The upstream itself refuses the same receipt for other
			// arguments, the same call again, and a call without one.
			direct := (&gated{url: up}).client(t, nil)
			for _, c := range []struct {
				name string
				args any
				meta mcp.Meta
				want string
			}{
				{"other arguments", map[string]any{"env": "prod", "version": 3}, mcp.Meta{receipt.MetaKey: rcpt}, "for another call's arguments"},
				{"an argument added", map[string]any{"version": 2, "env": "prod", "force": true}, mcp.Meta{receipt.MetaKey: rcpt}, "for another call's arguments"},
				{"the approved call replayed", prod, mcp.Meta{receipt.MetaKey: rcpt}, "used already"},
				{"no receipt", prod, nil, "no approval receipt"},
				{"not a receipt", prod, mcp.Meta{receipt.MetaKey: "eyJ.eyJ.sig"}, "not a receipt"},
			} {
				if text, isErr := callRaw(t, direct, "deploy", c.args, c.meta); !isErr || !strings.Contains(text, "refused") || !strings.Contains(text, c.want) {
					t.Errorf("%s: %q (error %v), want a refusal saying %q", c.name, text, isErr, c.want)
				}
			}

			// A call no rule stops goes through the proxy without a
			// receipt: a receipt the agent attaches is not passed on, and
			// the upstream refuses the call.
			text, isErr := callRaw(t, agent, "deploy", map[string]any{"env": "dev", "version": 1}, mcp.Meta{receipt.MetaKey: rcpt})
			if !isErr || !strings.Contains(text, "no approval receipt") {
				t.Errorf("an unconfirmed call with the agent's receipt: %q (error %v)", text, isErr)
			}
			if got, n := tap.last(); got != "" || n != 2 {
				t.Errorf("the agent's receipt reached the upstream (%d calls): %q", n, got)
			}

			// A declined call is not forwarded.
			declined := wantPending(t, call(t, agent, "deploy", map[string]any{"env": "prod", "version": 4}))
			local.Decide(t, declined.ReviewURL, elicitation.DecisionDeclined, nil)
			if r := call(t, agent, "deploy", map[string]any{"env": "prod", "version": 4}); r.gate.Reason != gate.ReasonConfirmationDeclined {
				t.Errorf("declined: %q %+v", r.text, r.gate)
			}
			if _, n := tap.last(); n != 2 {
				t.Errorf("the declined call reached the upstream (%d calls)", n)
			}
		})
	}
}
