package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/apikey"
	"github.com/mcp-elicitation/elicitation/internal/apikey/dynamokeys"
	"github.com/mcp-elicitation/elicitation/internal/dynamostore/dynamotest"
	"github.com/mcp-elicitation/elicitation/internal/mcptools/pushtest"
	"github.com/mcp-elicitation/elicitation/internal/mcptools/tasktest"
	"github.com/mcp-elicitation/elicitation/internal/pagetoken"
	"github.com/mcp-elicitation/elicitation/internal/testenv"
)

// TestErasOnDefaultEndpoint: the local server's default /mcp serves every
// era at once (sessions, and 2026-07-28 without), each with and without
// URL elicitation: pushed on the session (2025-11-25) and in an
// input-required result (2026-07-28), plain results elsewhere.
func TestErasOnDefaultEndpoint(t *testing.T) {
	t.Parallel()
	m := start(t, "--data-dir", t.TempDir(), "--max-wait", "10s")
	pushtest.Run(t, pushtest.Target{MCPURL: m.MCPURL, Sessions: true, SessionlessPush: true})
}

// TestErasPushOff: --push=false gives every host plain results.
func TestErasPushOff(t *testing.T) {
	t.Parallel()
	m := start(t, "--data-dir", t.TempDir(), "--push=false")
	tg := pushtest.Target{MCPURL: m.MCPURL}
	for _, era := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(era, func(t *testing.T) { pushtest.RunOne(t, tg, era, true) })
	}
}

// TestErasStatelessTwoProcesses: two "elicitation serve --stateless"
// processes on one DynamoDB table, requests alternating between them
// through a round-robin proxy: every era is served without sessions, the
// 2026-07-28 push works across the two (shared push-state keys), and no
// session era is pushed to (a stateless server cannot send requests). MCP
// Tasks of both flavours work across the two as well: every task created
// through one is polled and read through the other, and another
// principal's task does not exist for them (API keys in the table).
func TestErasStatelessTwoProcesses(t *testing.T) {
	testenv.Slow(t, "two built server processes")
	endpoint := dynamotest.Endpoint(t)
	db := dynamotest.Client(endpoint)
	table := dynamotest.Table(t, db)
	keys := map[string]http.Header{}
	for _, p := range []string{"alice", "bob"} {
		key, _, err := apikey.Create(context.Background(), dynamokeys.New(db, table), apikey.CreateOptions{Principal: p})
		if err != nil {
			t.Fatal(err)
		}
		keys[p] = http.Header{"Authorization": {"Bearer " + key}}
	}
	bin := filepath.Join(t.TempDir(), "elicitation")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	front := httptest.NewUnstartedServer(nil)
	public := "http://" + front.Listener.Addr().String()
	env := append(os.Environ(), "AWS_ENDPOINT_URL_DYNAMODB="+endpoint, "AWS_REGION=us-east-1", "AWS_ACCESS_KEY_ID=dummy", "AWS_SECRET_ACCESS_KEY=dummy",
		"ELICITATION_TOKEN_KEYS=t0:"+pagetoken.GenerateSecret(), "ELICITATION_STATE_KEYS=s0:"+pagetoken.GenerateSecret())
	var backends []*url.URL
	for range 2 {
		addr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
		cmd := exec.Command(bin, "serve", "--stateless", "--store", "dynamodb", "--table", table, "--addr", addr,
			"--public-url", public, "--data-dir", t.TempDir(), "--max-wait", "10s", "--log-level", "warn", "--require-api-key")
		cmd.Env = env
		logs := &testenv.SyncBuffer{}
		cmd.Stdout, cmd.Stderr = logs, logs
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = cmd.Process.Signal(os.Interrupt)
			_ = cmd.Wait()
			if t.Failed() {
				t.Logf("server %s:\n%s", addr, logs.String())
			}
		})
		waitHealthy(t, "http://"+addr)
		u, _ := url.Parse("http://" + addr)
		backends = append(backends, u)
	}
	var next atomic.Uint64
	hits := make([]atomic.Int64, len(backends))
	front.Config.Handler = &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		i := next.Add(1) % uint64(len(backends))
		hits[i].Add(1)
		r.SetURL(backends[i])
	}}
	front.Start()
	t.Cleanup(front.Close)
	pushtest.Run(t, pushtest.Target{MCPURL: public + "/mcp", Header: keys["alice"], SessionlessPush: true})
	t.Run("tasks", func(t *testing.T) {
		tasktest.Run(t, tasktest.Target{MCPURL: public + "/mcp", Alice: keys["alice"], Bob: keys["bob"], URLInput: true})
	})
	for i := range hits {
		if hits[i].Load() < 20 {
			t.Errorf("process %d served only %d requests", i, hits[i].Load())
		}
	}
}

func waitHealthy(t *testing.T, base string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		res, err := http.Get(base + "/healthz")
		if err == nil {
			_ = res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never became healthy: %v", base, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestTasksOnDefaultEndpoint: MCP Tasks of both flavours on the local
// server's default /mcp (sessions for 2025-11-25, sessionless 2026-07-28),
// decided on its review page (internal/mcptools/tasktest).
func TestTasksOnDefaultEndpoint(t *testing.T) {
	m := start(t, "--data-dir", t.TempDir(), "--max-wait", "10s")
	tasktest.Run(t, tasktest.Target{MCPURL: m.MCPURL, URLInput: true})
}
