package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/oauth2"

	"github.com/mcp-elicitation/elicitation/internal/dynamostore/dynamotest"
	"github.com/mcp-elicitation/elicitation/internal/metrics"
	"github.com/mcp-elicitation/elicitation/internal/pagetoken"
)

func TestMain(m *testing.M) { os.Exit(dynamotest.Main(m)) }

func noEnv(string) string { return "" }

// start runs the local server as "elicitation serve" would, on port 0.
func start(t *testing.T, args ...string) *Main {
	t.Helper()
	cfg, err := parseServe(append([]string{"--addr", "127.0.0.1:0", "--log-level", "warn"}, args...), io.Discard, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	m, err := Start(context.Background(), cfg, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := m.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return m
}

// agent is an MCP client session on the server's /mcp endpoint, over real HTTP.
func agent(t *testing.T, mcpURL string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "test-agent", Version: "1"}, nil)
	s, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: mcpURL}, nil)
	if err != nil {
		t.Fatalf("connect %s: %v", mcpURL, err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func call(t *testing.T, s *mcp.ClientSession, tool string, args map[string]any) map[string]any {
	t.Helper()
	res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	if res.IsError {
		t.Fatalf("%s: tool error %v", tool, text(res))
	}
	var out map[string]any
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("%s: structured content %s: %v", tool, b, err)
	}
	return out
}

func text(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, " ")
}

var tokenRE = regexp.MustCompile(`name="token" value="([^"]+)"`)

// review opens a review URL like a browser and returns its page token.
func openReview(t *testing.T, reviewURL string) (token string, res *http.Response) {
	t.Helper()
	res, err := http.Get(reviewURL)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	m := tokenRE.FindSubmatch(body)
	if res.StatusCode != http.StatusOK || m == nil {
		t.Fatalf("GET review page: %d, token found: %v", res.StatusCode, m != nil)
	}
	return html.UnescapeString(string(m[1])), res
}

// untilWaiting returns once an elicit_await waits in m (its waits_open
// gauge; m runs with --metrics-addr), so that what the test does next
// wakes a waiter rather than answers a later call.
func untilWaiting(t *testing.T, m *Main) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); value(scrape(t, m.MetricsURL), metrics.WaitsOpen) < 1; time.Sleep(10 * time.Millisecond) { // polling a gauge: the server sends no notice
		if time.Now().After(deadline) {
			t.Fatal("no elicit_await ever waited")
		}
	}
}

func submit(t *testing.T, reviewURL string, form url.Values) int {
	t.Helper()
	res, err := http.PostForm(reviewURL, form)
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	return res.StatusCode
}

func TestServeSelectionEndToEnd(t *testing.T) {
	m := start(t, "--data-dir", t.TempDir(), "--max-wait", "10s", "--metrics-addr", "127.0.0.1:0")
	s := agent(t, m.MCPURL)

	created := call(t, s, "elicit_selection", map[string]any{
		"message": "Which Guggenheim?",
		"options": []any{
			map[string]any{"id": "nyc", "label": "Solomon R. Guggenheim Museum, New York"},
			map[string]any{"id": "bilbao", "label": "Guggenheim Museum Bilbao"},
			map[string]any{"id": "partners", "label": "Guggenheim Partners"},
		},
	})
	id, _ := created["elicitationId"].(string)
	reviewURL, _ := created["reviewUrl"].(string)
	if created["status"] != "pending" || id == "" || !strings.HasPrefix(reviewURL, m.ReviewBase+"/review/"+id+"/") {
		t.Fatalf("created %v", created)
	}
	token, res := openReview(t, reviewURL)
	// A second render, as on another device: its own token.
	token2, _ := openReview(t, reviewURL)
	for _, h := range []string{"Content-Security-Policy", "Referrer-Policy", "X-Content-Type-Options", "Cache-Control"} {
		if res.Header.Get(h) == "" {
			t.Errorf("review page lacks %s", h)
		}
	}

	// An agent waiting now is woken by the decision.
	woke := make(chan map[string]any, 1)
	go func() {
		res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "elicit_await", Arguments: map[string]any{"elicitationId": id}})
		if err != nil || res.IsError {
			t.Errorf("await: %v %v", err, res)
			woke <- nil
			return
		}
		b, _ := json.Marshal(res.StructuredContent)
		var out map[string]any
		_ = json.Unmarshal(b, &out)
		woke <- out
	}()
	untilWaiting(t, m)
	if code := submit(t, reviewURL, url.Values{"token": {token}, "decision": {"submitted"}, "option": {"bilbao"}}); code != http.StatusOK && code != http.StatusSeeOther {
		t.Fatalf("submit: %d", code)
	}
	select {
	case out := <-woke:
		if out["status"] != "submitted" {
			t.Fatalf("await woke with %v", out)
		}
	case <-time.After(9 * time.Second):
		t.Fatal("elicit_await was not woken by the decision within its bound")
	}
	result := call(t, s, "elicit_result", map[string]any{"elicitationId": id})
	if result["status"] != "consumed" || result["decision"] != "submitted" || fmt.Sprint(result["selectedIds"]) != "[bilbao]" {
		t.Fatalf("result %v", result)
	}
	// The same submission retried (a double tap) is the success it was; a
	// submission from the other render is refused.
	if code := submit(t, reviewURL, url.Values{"token": {token}, "decision": {"submitted"}, "option": {"bilbao"}}); code != http.StatusOK && code != http.StatusSeeOther {
		t.Fatalf("retried submission: %d, want success", code)
	}
	if code := submit(t, reviewURL, url.Values{"token": {token2}, "decision": {"submitted"}, "option": {"nyc"}}); code != http.StatusConflict {
		t.Fatalf("late submission: %d, want 409", code)
	}
}

func TestReviewOnSecondListener(t *testing.T) {
	m := start(t, "--data-dir", t.TempDir(), "--review-addr", "127.0.0.1:0")
	if strings.Contains(m.MCPURL, strings.TrimPrefix(m.ReviewBase, "http://")) {
		t.Fatalf("review base %s shares the MCP address %s", m.ReviewBase, m.MCPURL)
	}
	s := agent(t, m.MCPURL)
	created := call(t, s, "elicit_approval", map[string]any{"message": "Ship?", "context": map[string]any{"v": 2}})
	reviewURL := created["reviewUrl"].(string)
	if !strings.HasPrefix(reviewURL, m.ReviewBase+"/review/") {
		t.Fatalf("review URL %s not on the review listener %s", reviewURL, m.ReviewBase)
	}
	openReview(t, reviewURL)
	// /mcp is not served on the review listener, nor the review page on the MCP one.
	res, err := http.Post(m.ReviewBase+"/mcp", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	if res.StatusCode != http.StatusNotFound {
		t.Errorf("POST /mcp on the review listener: %d, want 404", res.StatusCode)
	}
	mcpBase := strings.TrimSuffix(m.MCPURL, "/mcp")
	res, err = http.Get(mcpBase + strings.TrimPrefix(reviewURL, m.ReviewBase))
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	if res.StatusCode != http.StatusNotFound {
		t.Errorf("review page on the MCP listener: %d, want 404", res.StatusCode)
	}
}

func TestRestartKeepsRequestsAndTokens(t *testing.T) {
	dir := t.TempDir()
	cfg, err := parseServe([]string{"--addr", "127.0.0.1:0", "--data-dir", dir}, io.Discard, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	m1, err := Start(context.Background(), cfg, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	s := agent(t, m1.MCPURL)
	created := call(t, s, "elicit_approval", map[string]any{"message": "Ship?", "context": map[string]any{"v": 2}})
	id := created["elicitationId"].(string)
	reviewURL := created["reviewUrl"].(string)
	token, _ := openReview(t, reviewURL)
	_ = s.Close()
	if err := m1.Close(); err != nil {
		t.Fatal(err)
	}
	// A page rendered before the restart can still be submitted after it:
	// the store and the page-token secret are kept in the data directory.
	m2, err := Start(context.Background(), cfg, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m2.Close() })
	newURL := strings.Replace(reviewURL, m1.ReviewBase, m2.ReviewBase, 1)
	if code := submit(t, newURL, url.Values{"token": {token}, "decision": {"declined"}}); code != http.StatusOK && code != http.StatusSeeOther {
		t.Fatalf("submit after restart: %d", code)
	}
	st := call(t, agent(t, m2.MCPURL), "elicit_status", map[string]any{"elicitationId": id})
	if st["status"] != "declined" {
		t.Fatalf("status after restart %v", st)
	}
}

// Two local servers on one DynamoDB table share requests: created through
// one, decided through the other's review page, awaited on the first.
func TestTwoServersOneDynamoDBTable(t *testing.T) {
	endpoint := dynamotest.Endpoint(t)
	table := dynamotest.Table(t, dynamotest.Client(endpoint))
	t.Setenv("AWS_ENDPOINT_URL_DYNAMODB", endpoint)
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_ACCESS_KEY_ID", "dummy")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "dummy")
	keys := "shared:" + pagetoken.GenerateSecret()
	common := []string{"--store", "dynamodb", "--table", table, "--token-keys", keys, "--max-wait", "10s", "--metrics-addr", "127.0.0.1:0"}
	a := start(t, append(common, "--data-dir", t.TempDir())...)
	b := start(t, append(common, "--data-dir", t.TempDir())...)

	sa := agent(t, a.MCPURL)
	created := call(t, sa, "elicit_selection", map[string]any{
		"message": "Deploy which services?", "maxSelections": 2,
		"options": []any{map[string]any{"id": "api"}, map[string]any{"id": "web"}, map[string]any{"id": "worker"}},
	})
	id := created["elicitationId"].(string)
	onB := strings.Replace(created["reviewUrl"].(string), a.ReviewBase, b.ReviewBase, 1)
	token, _ := openReview(t, onB)
	woke := make(chan string, 1)
	go func() {
		res, err := sa.CallTool(context.Background(), &mcp.CallToolParams{Name: "elicit_await", Arguments: map[string]any{"elicitationId": id}})
		if err != nil || res.IsError {
			woke <- fmt.Sprint("error: ", err)
			return
		}
		woke <- res.StructuredContent.(map[string]any)["status"].(string)
	}()
	untilWaiting(t, a)
	if code := submit(t, onB, url.Values{"token": {token}, "decision": {"submitted"}, "option": {"api", "worker"}}); code != http.StatusOK && code != http.StatusSeeOther {
		t.Fatalf("submit through B: %d", code)
	}
	select {
	case got := <-woke:
		if got != "submitted" {
			t.Fatalf("A's elicit_await returned %q", got)
		}
	case <-time.After(9 * time.Second):
		t.Fatal("A's elicit_await was not woken by the decision made through B")
	}
	res := call(t, agent(t, b.MCPURL), "elicit_status", map[string]any{"elicitationId": id})
	if res["status"] != "submitted" {
		t.Fatalf("B sees %v", res)
	}
	result := call(t, sa, "elicit_result", map[string]any{"elicitationId": id})
	if fmt.Sprint(result["selectedIds"]) != "[api worker]" {
		t.Fatalf("result %v", result)
	}
}

func TestCommandLineErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"frobnicate"}, nil, `unknown command "frobnicate"`},
		{[]string{"serve", "--max-wait", "0s"}, nil, "--max-wait 0s: must be between 1s and 15m0s"},
		{[]string{"serve", "--store", "sqlite"}, nil, `--store "sqlite": must be "bolt" or "dynamodb"`},
		{[]string{"serve", "extra"}, nil, `serve takes no arguments, got "extra"`},
		{[]string{"serve", "--bar-owner", "false"}, nil, `serve takes no arguments, got "false": a boolean flag takes its value after "=", as in --bar-owner=false`},
		{[]string{"serve", "--bar-owner=0"}, nil, `invalid boolean value "0" for -bar-owner: want true or false`},
		{[]string{"serve"}, map[string]string{"ELICITATION_BAR_OWNER": "0"}, `$ELICITATION_BAR_OWNER="0": want true or false`},
		{[]string{"serve"}, map[string]string{"ELICITATION_BAR_OWNER": "FALSE"}, `$ELICITATION_BAR_OWNER="FALSE": want true or false`},
		{[]string{"serve"}, map[string]string{"ELICITATION_PUSH": "f"}, `$ELICITATION_PUSH="f": want true or false`},
		{[]string{"serve"}, map[string]string{"ELICITATION_MAX_WAIT": "soon"}, `$ELICITATION_MAX_WAIT="soon": not a duration`},
		{[]string{"serve", "--addr", "127.0.0.1:0", "--token-keys", "bad"}, nil, "--token-keys"},
		{[]string{"serve", "--addr", "127.0.0.1:0", "--log-level", "loud"}, nil, `invalid value "loud" for flag -log-level: not debug, info, warn or error`},
		{[]string{"audit"}, nil, "usage: elicitation audit [flags] [--] ELICITATION_ID"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			getenv := func(k string) string {
				if k == "ELICITATION_DATA_DIR" {
					return t.TempDir()
				}
				return tc.env[k]
			}
			err := run(context.Background(), tc.args, io.Discard, io.Discard, getenv)
			if err == nil || !strings.Contains(err.Error(), tc.want) || errors.Is(err, flag.ErrHelp) {
				t.Fatalf("err = %v, want it to say %q", err, tc.want)
			}
		})
	}
}

func TestOperatorCommands(t *testing.T) {
	dir := t.TempDir()
	m := start(t, "--data-dir", dir)
	created := call(t, agent(t, m.MCPURL), "elicit_approval", map[string]any{"message": "Ship?", "context": 1})
	id := created["elicitationId"].(string)
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := run(context.Background(), []string{"audit", "--data-dir", dir, id}, &out, io.Discard, noEnv); err != nil {
		t.Fatal(err)
	}
	var got struct {
		State struct{ Status string }
		Audit struct{ Entries []struct{ Action string } }
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil || got.State.Status != "pending" || len(got.Audit.Entries) != 1 || got.Audit.Entries[0].Action != "created" {
		t.Fatalf("audit output %s (%v)", out.String(), err)
	}
	out.Reset()
	if err := run(context.Background(), []string{"cleanup", "--data-dir", dir}, &out, io.Discard, noEnv); err != nil || !strings.Contains(out.String(), "removed 0 requests") {
		t.Fatalf("cleanup: %q %v", out.String(), err)
	}
	if err := run(context.Background(), []string{"audit", "--data-dir", dir, "nope"}, &out, io.Discard, noEnv); err == nil || !strings.Contains(err.Error(), "no elicitation with that id") {
		t.Fatalf("audit of unknown id: %v", err)
	}
}

func TestAPIKeys(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	create := func(principal string) string {
		out.Reset()
		if err := run(context.Background(), []string{"keys", "--data-dir", dir, "create", "--principal", principal, "--json"}, &out, io.Discard, noEnv); err != nil {
			t.Fatalf("keys create: %v", err)
		}
		var k struct{ Key, Secret string }
		_ = json.Unmarshal(out.Bytes(), &k)
		secret := k.Key
		if secret == "" {
			secret = k.Secret
		}
		if secret == "" {
			t.Fatalf("no key in %s", out.String())
		}
		return secret
	}
	alice, bob := create("alice"), create("bob")
	m := start(t, "--data-dir", dir, "--require-api-key")

	// Without a key, or with a wrong one: 401 with a challenge and nothing else.
	for _, auth := range []string{"", "Bearer nope", "Bearer " + alice + "x"} {
		req, _ := http.NewRequest(http.MethodPost, m.MCPURL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		_ = res.Body.Close()
		if res.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(res.Header.Get("WWW-Authenticate"), "Bearer") || strings.Contains(string(body), "tools") {
			t.Errorf("auth %q: %d %q %q", auth, res.StatusCode, res.Header.Get("WWW-Authenticate"), body)
		}
	}
	connect := func(key string) *mcp.ClientSession {
		c := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, nil)
		s, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: m.MCPURL, HTTPClient: oauth2.NewClient(context.Background(), oauth2.StaticTokenSource(&oauth2.Token{AccessToken: key}))}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	}
	sa, sb := connect(alice), connect(bob)
	created := call(t, sa, "elicit_approval", map[string]any{"message": "Ship?", "context": 1})
	id := created["elicitationId"].(string)
	// Each key's principal owns what it creates: bob cannot see alice's request.
	res, err := sb.CallTool(context.Background(), &mcp.CallToolParams{Name: "elicit_status", Arguments: map[string]any{"elicitationId": id}})
	if err != nil || !res.IsError || !strings.HasPrefix(text(res), "not_found:") {
		t.Fatalf("bob reads alice's request: %v %v", err, res)
	}
	if st := call(t, sa, "elicit_status", map[string]any{"elicitationId": id}); st["status"] != "pending" {
		t.Fatalf("alice's status %v", st)
	}
	tr, err := m.Service.OperatorAudit(context.Background(), id)
	if err != nil || tr.Entries[0].Principal != "alice" {
		t.Fatalf("creator recorded as %+v (%v)", tr.Entries, err)
	}
}

func TestServeRemovesRequestsPastRetention(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	cfg, err := parseServe([]string{"--addr", "127.0.0.1:0", "--data-dir", dir, "--retention", "1m", "--log-level", "warn"}, io.Discard, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	m1, err := Start(context.Background(), cfg, io.Discard, WithClock(func() time.Time { return now }))
	if err != nil {
		t.Fatal(err)
	}
	s := agent(t, m1.MCPURL)
	id := call(t, s, "elicit_approval", map[string]any{"message": "Ship?", "context": 1, "timeoutSeconds": 60})["elicitationId"].(string)
	_ = s.Close()
	if err := m1.Close(); err != nil {
		t.Fatal(err)
	}
	// Restarted after expiry plus retention, the server's cleanup removes it.
	later := now.Add(2*time.Minute + time.Second)
	m2, err := Start(context.Background(), cfg, io.Discard, WithClock(func() time.Time { return later }))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m2.Close() })
	s2 := agent(t, m2.MCPURL)
	deadline := time.Now().Add(10 * time.Second)
	for {
		res, err := s2.CallTool(context.Background(), &mcp.CallToolParams{Name: "elicit_status", Arguments: map[string]any{"elicitationId": id}})
		if err != nil {
			t.Fatal(err)
		}
		if res.IsError && strings.HasPrefix(text(res), "not_found:") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("request past its retention still there: %v", text(res))
		}
		time.Sleep(50 * time.Millisecond)
	}
}
