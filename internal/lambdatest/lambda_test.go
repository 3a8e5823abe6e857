//go:build unix

package lambdatest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/mcp-elicitation/elicitation/internal/apikey"
	"github.com/mcp-elicitation/elicitation/internal/apikey/dynamokeys"
	"github.com/mcp-elicitation/elicitation/internal/dynamostore/dynamotest"
	"github.com/mcp-elicitation/elicitation/internal/lambdatest"
	"github.com/mcp-elicitation/elicitation/internal/testenv"
)

var buildDir string

func TestMain(m *testing.M) {
	code := dynamotest.Main(m)
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// The functions, by template logical id.
var logicalIDs = map[string]string{"mcp": "McpFunction", "review": "ReviewFunction", "submit": "SubmitFunction"}

var builds struct {
	sync.Once
	paths map[string]string
}

// bootstraps builds the three bootstraps once per test binary, with
// infra/lambda.mk as sam build runs it.
func bootstraps(t testing.TB) map[string]string {
	t.Helper()
	builds.Do(func() {
		dir, err := os.MkdirTemp("", "lambdatest-")
		if err != nil {
			t.Fatal(err)
		}
		buildDir = dir
		builds.paths = map[string]string{}
		for fn, id := range logicalIDs {
			builds.paths[fn] = lambdatest.Build(t, id, filepath.Join(dir, fn))
		}
	})
	if len(builds.paths) != len(logicalIDs) {
		t.Fatal("the bootstraps were not built (see the first failure)")
	}
	return builds.paths
}

// The token-signing secret as Secrets Manager generates it for the stack:
// 64 alphanumerics.
const (
	tokenSecret    = "Zx3kP9qLm2Vb7Nc4Rt8Yw1Ae6Hd5Gf0Js3Ku9Ol2Ip7Mn4Bv8Cx1Zq6Wr5Ty0Ue3"
	tokenSecretARN = "arn:aws:secretsmanager:us-east-1:123456789012:secret:TokenSecret-AbCdEf"
	stateSecret    = "Qw8eRt5yUi2oPa9sDf6gHj3kLz0xCv7bNm4QaWs1EdRf8TgYh5UjIk2OlP9ZxCv6"
	stateSecretARN = "arn:aws:secretsmanager:us-east-1:123456789012:secret:PushStateSecret-GhIjKl"
)

// stack is the three functions on a fresh table, each behind an IAM
// enforcer of its template.yaml policy.
type stack struct {
	fn        map[string]*lambdatest.Function
	enforcers map[string]*lambdatest.Enforcer
	keys      map[string]string // principal -> API key
	sm        *lambdatest.SecretsManager
	keyStore  apikey.Store // the API keys in the stack's table
	table     string
}

type stackOptions struct {
	mcpTimeout time.Duration     // default 28 s, as deployed
	extraEnv   []string          // for the MCP function
	allEnv     []string          // for every function
	secrets    map[string]string // more secrets Secrets Manager serves, by ARN
	mcpLimits  lambdatest.Limits // the MCP function's memory and CPU (zero: none)
}

func newStack(t testing.TB, o stackOptions) *stack {
	t.Helper()
	testenv.Slow(t, "Lambda emulator")
	paths := bootstraps(t)
	db := dynamotest.Client(dynamotest.Endpoint(t))
	table := dynamotest.Table(t, db)
	s := &stack{fn: map[string]*lambdatest.Function{}, enforcers: map[string]*lambdatest.Enforcer{}, keys: map[string]string{}, keyStore: dynamokeys.New(db, table), table: table}
	for _, p := range []string{"alice", "bob"} {
		key, _, err := apikey.Create(context.Background(), s.keyStore, apikey.CreateOptions{Principal: p})
		if err != nil {
			t.Fatal(err)
		}
		s.keys[p] = key
	}
	more := []string{stateSecretARN, stateSecret}
	for arn, v := range o.secrets {
		more = append(more, arn, v)
	}
	s.sm = lambdatest.NewSecretsManager(t, tokenSecretARN, tokenSecret, more...)
	policies := lambdatest.Policies(t)
	if o.mcpTimeout == 0 {
		o.mcpTimeout = 28 * time.Second
	}
	for fn, id := range logicalIDs {
		s.enforcers[fn] = lambdatest.NewEnforcer(t, id, policies[id], dynamotest.Endpoint(t))
		env := []string{
			"ELICITATION_TABLE=" + table, "ELICITATION_LOG_LEVEL=debug",
			"AWS_REGION=us-east-1", "AWS_ACCESS_KEY_ID=dummy", "AWS_SECRET_ACCESS_KEY=dummy", "AWS_SESSION_TOKEN=dummy",
			"AWS_ENDPOINT_URL_DYNAMODB=" + s.enforcers[fn].URL,
		}
		timeout := 10 * time.Second
		switch fn {
		case "mcp":
			timeout = o.mcpTimeout
			env = append(env, "ELICITATION_MAX_WAIT=20s", "ELICITATION_WAIT_MARGIN=2s", "ELICITATION_RETENTION=7d", "ELICITATION_API_KEY_CACHE_TTL=30s",
				"ELICITATION_STATE_SECRET_ARN="+stateSecretARN, "ELICITATION_TOKEN_SECRET_ARN="+tokenSecretARN, "AWS_ENDPOINT_URL_SECRETS_MANAGER="+s.sm.URL)
			env = append(env, o.extraEnv...)
		default:
			env = append(env, "ELICITATION_TOKEN_SECRET_ARN="+tokenSecretARN, "AWS_ENDPOINT_URL_SECRETS_MANAGER="+s.sm.URL)
		}
		env = append(env, o.allEnv...)
		var limits lambdatest.Limits
		if fn == "mcp" {
			limits = o.mcpLimits
		}
		s.fn[fn] = lambdatest.StartLimited(t, id, paths[fn], timeout, limits, env...)
	}
	t.Cleanup(func() {
		for fn, e := range s.enforcers {
			for _, d := range e.Denied() {
				t.Errorf("IAM would refuse a call of the %s function: %s", fn, d)
			}
		}
		if t.Failed() || testing.Verbose() {
			for _, fn := range []string{"mcp", "review", "submit"} {
				t.Logf("%s function's DynamoDB accesses: %s", fn, strings.Join(s.enforcers[fn].Calls(), ", "))
			}
		}
	})
	return s
}

// placeholders of the files in events/.
const (
	phKey   = "REPLACE_WITH_API_KEY"
	phID    = "REPLACE_WITH_ELICITATION_ID"
	phRKey  = "REPLACE_WITH_REVIEW_KEY"
	phToken = "REPLACE_WITH_PAGE_TOKEN"
)

// event reads events/<name>.json with its placeholders replaced.
func event(t testing.TB, name string, repl ...string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(lambdatest.Root(t), "events", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var e events.APIGatewayV2HTTPRequest
	if err := json.Unmarshal(b, &e); err != nil || e.Version != "2.0" || e.RequestContext.HTTP.Method == "" {
		t.Fatalf("events/%s.json is not an HTTP API payload 2.0 event (%v)", name, err)
	}
	return []byte(strings.NewReplacer(repl...).Replace(string(b)))
}

type toolResult struct {
	IsError           bool            `json:"isError"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	Content           []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	Tools []struct {
		Name         string          `json:"name"`
		InputSchema  json.RawMessage `json:"inputSchema"`
		OutputSchema json.RawMessage `json:"outputSchema"`
	} `json:"tools"`
}

type toolOutput struct {
	ElicitationID  string            `json:"elicitationId"`
	Status         string            `json:"status"`
	ReviewURL      string            `json:"reviewUrl"`
	ExpiresAt      string            `json:"expiresAt"`
	Decision       string            `json:"decision"`
	SelectedIDs    []string          `json:"selectedIds"`
	FormSubmission map[string]any    `json:"formSubmission"`
	Context        json.RawMessage   `json:"context"`
	Extra          map[string]string `json:"-"`
}

// rpc invokes the MCP function and decodes the JSON-RPC result.
func rpc(t testing.TB, f *lambdatest.Function, ev []byte) (toolResult, events.APIGatewayV2HTTPResponse) {
	t.Helper()
	resp, _ := f.Invoke(t, ev)
	if resp.StatusCode != 200 {
		t.Fatalf("MCP status %d: %s", resp.StatusCode, resp.Body)
	}
	if ct := resp.Headers["Content-Type"]; !strings.HasPrefix(ct, "application/json") {
		t.Errorf("MCP Content-Type %q, want application/json (stateless JSON responses)", ct)
	}
	var msg struct {
		Result *toolResult `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(resp.Body), &msg); err != nil || msg.Result == nil {
		t.Fatalf("MCP response is not a JSON-RPC result (%v): %s", err, resp.Body)
	}
	return *msg.Result, resp
}

// tool invokes a tool call event and decodes its structured output; a tool
// error fails the test unless wantErr, and then its text is returned.
func tool(t testing.TB, f *lambdatest.Function, ev []byte) (toolOutput, string) {
	t.Helper()
	r, _ := rpc(t, f, ev)
	if r.IsError {
		if len(r.Content) == 0 {
			t.Fatalf("a tool error without text")
		}
		return toolOutput{}, r.Content[0].Text
	}
	var out toolOutput
	if err := json.Unmarshal(r.StructuredContent, &out); err != nil {
		t.Fatalf("structuredContent %s: %v", r.StructuredContent, err)
	}
	return out, ""
}

func mustTool(t testing.TB, f *lambdatest.Function, ev []byte) toolOutput {
	t.Helper()
	out, errText := tool(t, f, ev)
	if errText != "" {
		t.Fatalf("tool error: %s", errText)
	}
	return out
}

var reviewURLRE = regexp.MustCompile(`^https://a1b2c3d4e5\.execute-api\.us-east-1\.amazonaws\.com/review/([A-Za-z0-9_-]+)/([A-Za-z0-9_-]+)$`)

func reviewParts(t testing.TB, u string) (id, key string) {
	t.Helper()
	m := reviewURLRE.FindStringSubmatch(u)
	if m == nil {
		t.Fatalf("reviewUrl %q: want https://<the event's domain name>/review/{id}/{key}", u)
	}
	return m[1], m[2]
}

var tokenRE = regexp.MustCompile(`name="token" value="([^"]+)"`)

func pageToken(t testing.TB, html string) string {
	t.Helper()
	m := tokenRE.FindStringSubmatch(html)
	if m == nil {
		t.Fatalf("the review page has no token field:\n%.2000s", html)
	}
	return m[1]
}

// TestEvents invokes every file in events/ and checks the answer.
func TestEvents(t *testing.T) {
	testenv.Slow(t, "Lambda emulator")
	t.Parallel()
	s := newStack(t, stackOptions{})
	key := s.keys["alice"]
	files, err := filepath.Glob(filepath.Join(lambdatest.Root(t), "events", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	covered := map[string]bool{}
	ev := func(name string, repl ...string) []byte {
		covered[name] = true
		return event(t, name, append([]string{phKey, key}, repl...)...)
	}

	// tools/list: the six tools, each with input and output schemas.
	r, _ := rpc(t, s.fn["mcp"], ev("mcp-tools-list"))
	var names []string
	for _, tl := range r.Tools {
		names = append(names, tl.Name)
		if len(tl.InputSchema) == 0 || len(tl.OutputSchema) == 0 {
			t.Errorf("tool %s lacks an input or output schema", tl.Name)
		}
	}
	sort.Strings(names)
	if want := []string{"elicit_approval", "elicit_await", "elicit_cancel", "elicit_result", "elicit_selection", "elicit_status"}; !slices.Equal(names, want) {
		t.Errorf("tools/list = %v, want %v", names, want)
	}

	// No key: 401 with a challenge and nothing else.
	resp, _ := s.fn["mcp"].Invoke(t, ev("mcp-unauthorized"))
	if resp.StatusCode != 401 || !strings.HasPrefix(resp.Headers["Www-Authenticate"], "Bearer ") || resp.Body != "" {
		t.Errorf("no key: %d %v %q, want 401 with WWW-Authenticate: Bearer and no body", resp.StatusCode, resp.Headers, resp.Body)
	}

	// Creation: approval and selection, review URLs on the event's domain.
	approval := mustTool(t, s.fn["mcp"], ev("mcp-elicit-approval"))
	if approval.Status != "pending" || approval.ExpiresAt == "" {
		t.Errorf("elicit_approval = %+v", approval)
	}
	aID, aKey := reviewParts(t, approval.ReviewURL)
	if aID != approval.ElicitationID {
		t.Errorf("reviewUrl id %s, elicitationId %s", aID, approval.ElicitationID)
	}
	selection := mustTool(t, s.fn["mcp"], ev("mcp-elicit-selection"))
	if selection.Status != "pending" {
		t.Errorf("elicit_selection = %+v", selection)
	}

	// Status and a short await on the approval: pending.
	if out := mustTool(t, s.fn["mcp"], ev("mcp-elicit-status", phID, aID)); out.Status != "pending" {
		t.Errorf("elicit_status = %+v, want pending", out)
	}
	start := time.Now()
	if out := mustTool(t, s.fn["mcp"], ev("mcp-elicit-await", phID, aID)); out.Status != "pending" {
		t.Errorf("elicit_await = %+v, want pending", out)
	}
	if d := time.Since(start); d < 1500*time.Millisecond || d > 10*time.Second {
		t.Errorf("elicit_await with waitSeconds 2 took %v", d)
	}
	// Result before a decision: not_decided.
	if _, errText := tool(t, s.fn["mcp"], ev("mcp-elicit-result", phID, aID)); !strings.HasPrefix(errText, "not_decided") {
		t.Errorf("elicit_result while pending: %q, want not_decided", errText)
	}

	// The review page (review function).
	page, _ := s.fn["review"].Invoke(t, ev("review-get", phID, aID, phRKey, aKey))
	if page.StatusCode != 200 || !strings.HasPrefix(page.Headers["Content-Type"], "text/html") || !strings.Contains(page.Headers["Content-Security-Policy"], "script-src 'none'") {
		t.Fatalf("review GET: %d %v", page.StatusCode, page.Headers)
	}
	if !strings.Contains(page.Body, "Deploy billing-api v2.4.1 to production?") || !strings.Contains(page.Body, `name="f.notify"`) {
		t.Errorf("review page lacks the message or the form:\n%.3000s", page.Body)
	}
	token := pageToken(t, page.Body)

	// An invalid submission (submit function): 422, nothing decided.
	bad, _ := s.fn["submit"].Invoke(t, ev("submit-invalid", phID, aID, phRKey, aKey, phToken, token))
	if bad.StatusCode != 422 {
		t.Errorf("invalid submission: %d, want 422\n%.2000s", bad.StatusCode, bad.Body)
	}
	if out := mustTool(t, s.fn["mcp"], ev("mcp-elicit-status", phID, aID)); out.Status != "pending" {
		t.Errorf("after an invalid submission the status is %s, want pending", out.Status)
	}
	// The valid one: 200, decided; its retry is answered as the success it was.
	good, _ := s.fn["submit"].Invoke(t, ev("submit-valid", phID, aID, phRKey, aKey, phToken, token))
	if good.StatusCode != 200 {
		t.Errorf("valid submission: %d, want 200\n%.2000s", good.StatusCode, good.Body)
	}
	again, _ := s.fn["submit"].Invoke(t, ev("submit-valid", phID, aID, phRKey, aKey, phToken, token))
	if again.StatusCode != 200 {
		t.Errorf("the retried valid submission: %d, want 200 again", again.StatusCode)
	}

	// Await and result (MCP function).
	if out := mustTool(t, s.fn["mcp"], ev("mcp-elicit-await", phID, aID)); out.Status != "submitted" {
		t.Errorf("elicit_await after the decision = %+v, want submitted", out)
	}
	res := mustTool(t, s.fn["mcp"], ev("mcp-elicit-result", phID, aID))
	if res.Status != "consumed" || res.Decision != "submitted" || fmt.Sprint(res.FormSubmission) != "map[notify:oncall@example.com window:tonight]" {
		t.Errorf("elicit_result = %+v", res)
	}

	// Cancel the selection; cancel again is a conflict.
	if out := mustTool(t, s.fn["mcp"], ev("mcp-elicit-cancel", phID, selection.ElicitationID)); out.Status != "canceled" {
		t.Errorf("elicit_cancel = %+v", out)
	}
	// Cancel after a decision: a conflict.
	if _, errText := tool(t, s.fn["mcp"], ev("mcp-elicit-cancel", phID, aID)); !strings.HasPrefix(errText, "conflict") {
		t.Errorf("elicit_cancel of a decided request: %q, want a conflict", errText)
	}

	// The files as they are, placeholders and all (what `sam local invoke -e`
	// sends unedited): refused cleanly, never a crash.
	if resp, _ := s.fn["mcp"].Invoke(t, event(t, "mcp-elicit-status")); resp.StatusCode != 401 {
		t.Errorf("mcp-elicit-status.json unedited: %d, want 401 (placeholder key)", resp.StatusCode)
	}
	if resp, _ := s.fn["review"].Invoke(t, event(t, "review-get")); resp.StatusCode != 404 {
		t.Errorf("review-get.json unedited: %d, want 404", resp.StatusCode)
	}
	if resp, _ := s.fn["submit"].Invoke(t, event(t, "submit-valid")); resp.StatusCode != 403 && resp.StatusCode != 404 {
		t.Errorf("submit-valid.json unedited: %d, want 403 or 404", resp.StatusCode)
	}

	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		if !covered[name] {
			t.Errorf("events/%s.json is not exercised by this test", name)
		}
	}
	if n := s.sm.ReadsOf(tokenSecretARN); n != 3 {
		t.Errorf("the token secret was read %d times, want once per function start (3: the MCP function signs receipts with keys derived from it)", n)
	}
	if n := s.sm.ReadsOf(stateSecretARN); n != 1 {
		t.Errorf("the push-state secret was read %d times, want once, by the MCP function's start", n)
	}
}

// TestFlow runs a selection end to end across the three processes, with a
// wait that is already in progress when the decision lands in another
// process, and checks principals and keys.
func TestFlow(t *testing.T) {
	testenv.Slow(t, "Lambda emulator")
	t.Parallel()
	s := newStack(t, stackOptions{})
	alice, bob := s.keys["alice"], s.keys["bob"]
	sel := mustTool(t, s.fn["mcp"], event(t, "mcp-elicit-selection", phKey, alice))
	id, key := reviewParts(t, sel.ReviewURL)

	// Another principal does not see it.
	if _, errText := tool(t, s.fn["mcp"], event(t, "mcp-elicit-status", phKey, bob, phID, id)); !strings.HasPrefix(errText, "not_found") {
		t.Errorf("bob's elicit_status on alice's request: %q, want not_found", errText)
	}
	// A revoked or made-up key gets 401.
	resp, _ := s.fn["mcp"].Invoke(t, event(t, "mcp-elicit-status", phKey, apikey.Generate(), phID, id))
	if resp.StatusCode != 401 || resp.Headers["Www-Authenticate"] != `Bearer realm="mcp-elicitation", error="invalid_token"` || resp.Body != "" {
		t.Errorf("unknown key: %d %v %q", resp.StatusCode, resp.Headers, resp.Body)
	}

	page, _ := s.fn["review"].Invoke(t, event(t, "review-get", phID, id, phRKey, key))
	if page.StatusCode != 200 || !strings.Contains(page.Body, `name="option" value="b"`) {
		t.Fatalf("review page: %d\n%.3000s", page.StatusCode, page.Body)
	}
	token := pageToken(t, page.Body)
	// A second render (another tab): its token names another submission.
	page2, _ := s.fn["review"].Invoke(t, event(t, "review-get", phID, id, phRKey, key))
	token2 := pageToken(t, page2.Body)

	// A wait in progress on the MCP function while the reviewer submits
	// through the submit function: the emulators are separate processes.
	type awaited struct {
		out toolOutput
		d   time.Duration
	}
	done := make(chan awaited, 1)
	awaitEv := []byte(strings.Replace(string(event(t, "mcp-elicit-await", phKey, alice, phID, id)), `\"waitSeconds\":2`, `\"waitSeconds\":15`, 1))
	reads := s.enforcers["mcp"].Count("GetItem req#")
	go func() {
		start := time.Now()
		out, _ := tool(t, s.fn["mcp"], awaitEv)
		done <- awaited{out, time.Since(start)}
	}()
	// The wait is in progress once its store's watch has polled the
	// request: a read beyond the two the call makes before it waits (the
	// owner's, the state's).
	for deadline := time.Now().Add(time.Minute); s.enforcers["mcp"].Count("GetItem req#") < reads+3; time.Sleep(20 * time.Millisecond) { // polling a count: the enforcer sends no notice
		if time.Now().After(deadline) {
			t.Fatalf("elicit_await never polled the request: %v", s.enforcers["mcp"].Calls())
		}
	}
	form := "token=" + token + "&decision=submitted&option=a&option=c"
	submitEv := []byte(strings.NewReplacer(phID, id, phRKey, key, "token=REPLACE_WITH_PAGE_TOKEN&decision=submitted&f.notify=oncall%40example.com&f.window=tonight", form).
		Replace(string(event(t, "submit-valid"))))
	decided := time.Now()
	sub, _ := s.fn["submit"].Invoke(t, submitEv)
	if sub.StatusCode != 200 {
		t.Fatalf("submission: %d\n%.2000s", sub.StatusCode, sub.Body)
	}
	var a awaited
	select {
	case a = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("elicit_await did not return")
	}
	if a.out.Status != "submitted" {
		t.Fatalf("elicit_await = %+v, want submitted", a.out)
	}
	t.Logf("elicit_await returned %v after the submission was sent (the store polls every 200 ms)", time.Since(decided))
	res := mustTool(t, s.fn["mcp"], event(t, "mcp-elicit-result", phKey, alice, phID, id))
	if res.Decision != "submitted" || !slices.Equal(res.SelectedIDs, []string{"a", "c"}) {
		t.Errorf("elicit_result = %+v, want submitted [a c]", res)
	}
	// The review page now shows the final state; another submission is refused.
	final, _ := s.fn["review"].Invoke(t, event(t, "review-get", phID, id, phRKey, key))
	if final.StatusCode != 200 || strings.Contains(final.Body, `name="token"`) {
		t.Errorf("the review page after the decision: %d (still a form?)", final.StatusCode)
	}
	late, _ := s.fn["submit"].Invoke(t, []byte(strings.NewReplacer("option=a&option=c", "option=b", token, token2).Replace(string(submitEv))))
	if late.StatusCode != 409 {
		t.Errorf("a later submission from another render: %d, want 409", late.StatusCode)
	}
	// The review function never wrote a request's state or answer.
	for _, c := range s.enforcers["review"].Calls() {
		if strings.HasPrefix(c, "PutItem req#") || strings.HasPrefix(c, "UpdateItem req#") {
			t.Errorf("the review function wrote a request item: %s", c)
		}
	}
}

// TestWaitBoundedByInvocation gives the MCP function a 6 s timeout with the
// deployed 20 s MaxWait: elicit_await must return pending before the
// invocation ends (the Lambda deadline reaches the handler through
// ProxyWithContext), not be killed by the timeout.
func TestWaitBoundedByInvocation(t *testing.T) {
	testenv.Slow(t, "Lambda emulator")
	t.Parallel()
	s := newStack(t, stackOptions{mcpTimeout: 6 * time.Second})
	alice := s.keys["alice"]
	sel := mustTool(t, s.fn["mcp"], event(t, "mcp-elicit-selection", phKey, alice))
	ev := []byte(strings.Replace(string(event(t, "mcp-elicit-await", phKey, alice, phID, sel.ElicitationID)), `,\"waitSeconds\":2`, ``, 1))
	start := time.Now()
	out := mustTool(t, s.fn["mcp"], ev)
	d := time.Since(start)
	if out.Status != "pending" {
		t.Fatalf("elicit_await = %+v, want pending", out)
	}
	// 6 s timeout - 2 s margin = 4 s.
	if d < 3*time.Second || d > 5800*time.Millisecond {
		t.Errorf("elicit_await took %v; want about 4 s (the 6 s invocation minus the 2 s margin)", d)
	}
}

// TestColdAndWarm measures init and warm invocation times under the
// emulator (docs/benchmarks.md, "Lambda"): the emulator's REPORT lines give
// the bootstrap's init duration.
func TestColdAndWarm(t *testing.T) {
	testenv.Slow(t, "Lambda emulator")
	t.Parallel()
	s := newStack(t, stackOptions{})
	alice := s.keys["alice"]
	list := event(t, "mcp-tools-list", phKey, alice)
	for range 20 {
		s.fn["mcp"].Invoke(t, list)
	}
	sel := mustTool(t, s.fn["mcp"], event(t, "mcp-elicit-selection", phKey, alice))
	status := event(t, "mcp-elicit-status", phKey, alice, phID, sel.ElicitationID)
	var warm []time.Duration
	for range 20 {
		_, d := s.fn["mcp"].Invoke(t, status)
		warm = append(warm, d)
	}
	id, key := reviewParts(t, sel.ReviewURL)
	page := event(t, "review-get", phID, id, phRKey, key)
	var pages []time.Duration
	for range 10 {
		_, d := s.fn["review"].Invoke(t, page)
		pages = append(pages, d)
	}
	slices.Sort(warm)
	slices.Sort(pages)
	for _, fn := range []string{"mcp", "review"} {
		inits, runs := s.fn[fn].WaitInitDurations(), s.fn[fn].Durations()
		if len(inits) != 1 || len(runs) == 0 {
			t.Fatalf("%s: want one INIT REPORT and REPORT lines:\n%s", fn, s.fn[fn].Logs())
		}
		t.Logf("%s: init %v, first invocation %v", fn, inits[0], runs[0])
	}
	t.Logf("mcp elicit_status warm round trip: p50 %v, max %v (n=%d)", warm[len(warm)/2], warm[len(warm)-1], len(warm))
	t.Logf("review GET warm round trip: p50 %v, max %v (n=%d)", pages[len(pages)/2], pages[len(pages)-1], len(pages))
}

// TestTemplateTableMatchesStore compares the table template.yaml deploys
// with the one dynamostore.CreateTable makes (which the store's tests run
// against): same keys, attribute types, index and TTL attribute.
func TestTemplateTableMatchesStore(t *testing.T) {
	db := dynamotest.Client(dynamotest.Endpoint(t))
	table := dynamotest.TableAsCreated(t, db)
	ctx := context.Background()
	out, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)})
	if err != nil {
		t.Fatal(err)
	}
	ttl, err := db.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(table)})
	if err != nil {
		t.Fatal(err)
	}
	got := lambdatest.TableSpec{Attributes: map[string]string{}, Indexes: map[string][]string{}, TTL: aws.ToString(ttl.TimeToLiveDescription.AttributeName)}
	if ss := out.Table.StreamSpecification; ss != nil && aws.ToBool(ss.StreamEnabled) {
		got.Stream = string(ss.StreamViewType)
	}
	for _, k := range out.Table.KeySchema {
		got.Keys = append(got.Keys, aws.ToString(k.AttributeName)+" "+string(k.KeyType))
	}
	for _, a := range out.Table.AttributeDefinitions {
		got.Attributes[aws.ToString(a.AttributeName)] = string(a.AttributeType)
	}
	for _, g := range out.Table.GlobalSecondaryIndexes {
		var keys []string
		for _, k := range g.KeySchema {
			keys = append(keys, aws.ToString(k.AttributeName)+" "+string(k.KeyType))
		}
		got.Indexes[aws.ToString(g.IndexName)] = append(keys, "projection "+string(g.Projection.ProjectionType))
	}
	if want := lambdatest.TemplateTable(t); fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", want) {
		t.Errorf("dynamostore.CreateTable makes\n  %+v\ntemplate.yaml deploys\n  %+v", got, want)
	}
}

// TestLargeSelection creates a 500-option selection (the SPEC's maximum)
// through the MCP function and renders it through the review function:
// the page must fit a Lambda response (6 MB) and come back whole.
func TestLargeSelection(t *testing.T) {
	testenv.Slow(t, "Lambda emulator")
	t.Parallel()
	s := newStack(t, stackOptions{})
	alice := s.keys["alice"]
	var opts []string
	for i := range 500 {
		opts = append(opts, fmt.Sprintf(`{"id":"opt-%d","label":"Option %d: a reasonably descriptive label","domain":"example-%d.com","score":%d}`, i, i, i, i))
	}
	args := `{"message":"Pick up to three domains","options":[` + strings.Join(opts, ",") + `],"maxSelections":3,` +
		`"rowTemplate":"<b>{{ option.label }}</b> <small>{{ option.domain }} · score {{ option.score }}</small>","hoverTemplate":"{{ option.domain }}"}`
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": map[string]any{"name": "elicit_selection", "arguments": json.RawMessage(args)}})
	if err != nil {
		t.Fatal(err)
	}
	var ev map[string]any
	if err := json.Unmarshal(event(t, "mcp-elicit-selection", phKey, alice), &ev); err != nil {
		t.Fatal(err)
	}
	ev["body"] = string(body)
	raw, _ := json.Marshal(ev)
	sel := mustTool(t, s.fn["mcp"], raw)
	id, key := reviewParts(t, sel.ReviewURL)
	page, d := s.fn["review"].Invoke(t, event(t, "review-get", phID, id, phRKey, key))
	if page.StatusCode != 200 || !strings.Contains(page.Body, `value="opt-499"`) {
		t.Fatalf("500-option page: %d, %d bytes", page.StatusCode, len(page.Body))
	}
	if len(page.Body) > 5<<20 {
		t.Errorf("the 500-option page is %d bytes: too close to Lambda's 6 MB response limit", len(page.Body))
	}
	t.Logf("500-option review page: %d bytes, %v through the emulator", len(page.Body), d)
}

// TestRevokedKey revokes a key with the admin command while the MCP
// function runs (ELICITATION_API_KEY_CACHE_TTL=0s): the next call gets 401.
func TestRevokedKey(t *testing.T) {
	testenv.Slow(t, "Lambda emulator")
	t.Parallel()
	s := newStack(t, stackOptions{extraEnv: []string{"ELICITATION_API_KEY_CACHE_TTL=0s"}})
	alice := s.keys["alice"]
	list := event(t, "mcp-tools-list", phKey, alice)
	if resp, _ := s.fn["mcp"].Invoke(t, list); resp.StatusCode != 200 {
		t.Fatalf("before the revocation: %d", resp.StatusCode)
	}
	if _, err := s.keyStore.Revoke(context.Background(), apikey.IDOf(apikey.Hash(alice)), time.Now()); err != nil {
		t.Fatalf("keys revoke: %v", err)
	}
	resp, _ := s.fn["mcp"].Invoke(t, list)
	if resp.StatusCode != 401 || resp.Body != "" || resp.Headers["Www-Authenticate"] != `Bearer realm="mcp-elicitation", error="invalid_token"` {
		t.Errorf("after the revocation: %d %v %q, want 401 with the challenge only", resp.StatusCode, resp.Headers, resp.Body)
	}
	if resp, _ := s.fn["mcp"].Invoke(t, event(t, "mcp-tools-list", phKey, s.keys["bob"])); resp.StatusCode != 200 {
		t.Errorf("another principal's key after the revocation: %d, want 200", resp.StatusCode)
	}
}

// TestAPIKeyMakeTargets runs `make api-key-create`, `api-key-list` and
// `api-key-revoke` (infra/lambda.mk, through `elicitation keys`) against
// DynamoDB Local, as an operator runs them against the deployed table.
func TestAPIKeyMakeTargets(t *testing.T) {
	testenv.Slow(t, "DynamoDB Local")
	t.Parallel()
	root := lambdatest.Root(t)
	bin := filepath.Join(t.TempDir(), "elicitation")
	build := exec.Command("go", "build", "-o", bin, "./cmd/elicitation")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build cmd/elicitation: %v\n%s", err, out)
	}
	db := dynamotest.Client(dynamotest.Endpoint(t))
	table := dynamotest.Table(t, db)
	run := func(target string, vars ...string) string {
		t.Helper()
		cmd := exec.Command("make", append([]string{"-s", "--no-print-directory", "-f", "infra/lambda.mk", target, "ELICITATION=" + bin, "TABLE=" + table}, vars...)...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "AWS_ENDPOINT_URL_DYNAMODB="+dynamotest.Endpoint(t), "AWS_REGION=us-east-1",
			"AWS_ACCESS_KEY_ID=dummy", "AWS_SECRET_ACCESS_KEY=dummy", "AWS_PROFILE=", "AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("make %s: %v\n%s", target, err, out)
		}
		return string(out)
	}
	out := run("api-key-create", "PRINCIPAL=carol", "NAME=ci runner", "EXPIRES=30d")
	key := regexp.MustCompile(`elk_[a-z2-7]{59}`).FindString(out)
	if key == "" {
		t.Fatalf("api-key-create printed no key:\n%s", out)
	}
	store := dynamokeys.New(db, table)
	k, err := apikey.Verify(context.Background(), store, key, time.Now())
	if err != nil || k.Principal != "carol" || k.Name != "ci runner" || k.ExpiresAt.IsZero() {
		t.Fatalf("the created key in the table: %+v, %v", k, err)
	}
	if out := run("api-key-list"); !strings.Contains(out, k.ID) || !strings.Contains(out, "carol") || strings.Contains(out, "elk_") {
		t.Errorf("api-key-list:\n%s", out)
	}
	run("api-key-revoke", "ID="+k.ID)
	if _, err := apikey.Verify(context.Background(), store, key, time.Now()); err == nil {
		t.Error("the key still verifies after api-key-revoke")
	}
}

// TestColdStart measures each function's cold start under the emulator
// (docs/benchmarks.md, "Cold start"): from starting a fresh emulator with
// the bootstrap to the first answered call, that is the init plus the first
// request, beside an aws-lambda-go hello world built the same way
// (testdata/hello). Five starts each, one after another; it logs the
// figures and asserts only that every call was answered as it should be.
func TestColdStart(t *testing.T) {
	testenv.Slow(t, "Lambda emulator")
	s := newStack(t, stackOptions{})
	alice := s.keys["alice"]
	sel := mustTool(t, s.fn["mcp"], event(t, "mcp-elicit-selection", phKey, alice))
	id, key := reviewParts(t, sel.ReviewURL)
	notify := startNotify(t, s.table, `{"targets":{"ops":{"type":"webhook","url":"http://127.0.0.1:1/hook","secret":"${HOOK_SECRET}"}}}`)
	hello := lambdatest.Start(t, "HelloFunction", lambdatest.BuildHello(t, filepath.Join(t.TempDir(), "hello")), 10*time.Second)
	sweep := []byte(`{"version":"0","id":"e1","detail-type":"Scheduled Event","source":"aws.events","account":"123456789012","time":"2026-12-01T09:00:00Z","region":"us-east-1","resources":["arn:aws:events:us-east-1:123456789012:rule/sweep"],"detail":{}}`)
	cases := []struct {
		name  string
		fn    *lambdatest.Function
		event []byte
		want  func(resp events.APIGatewayV2HTTPResponse) bool // nil: not an HTTP function
	}{
		{"hello", hello, event(t, "mcp-tools-list", phKey, alice), func(r events.APIGatewayV2HTTPResponse) bool { return r.StatusCode == 200 }},
		{"mcp", s.fn["mcp"], event(t, "mcp-tools-list", phKey, alice), func(r events.APIGatewayV2HTTPResponse) bool { return r.StatusCode == 200 }},
		{"review", s.fn["review"], event(t, "review-get", phID, id, phRKey, key), func(r events.APIGatewayV2HTTPResponse) bool { return r.StatusCode == 200 }},
		{"submit", s.fn["submit"], event(t, "submit-valid"), func(r events.APIGatewayV2HTTPResponse) bool { return r.StatusCode == 403 || r.StatusCode == 404 }},
		{"notify", notify, sweep, nil},
	}
	for _, c := range cases {
		var colds, inits []time.Duration
		for range 5 {
			f := c.fn.Again(t)
			if c.want != nil {
				if resp, _ := f.Invoke(t, c.event); !c.want(resp) {
					t.Fatalf("%s: first call answered %d: %s", c.name, resp.StatusCode, resp.Body)
				}
			} else {
				f.InvokeRaw(t, c.event)
			}
			colds = append(colds, time.Since(f.Started))
			in := f.WaitInitDurations()
			if len(in) != 1 {
				t.Fatalf("%s: want one INIT REPORT line:\n%s", c.name, f.Logs())
			}
			inits = append(inits, in[0])
		}
		slices.Sort(colds)
		t.Logf("cold start %-6s: median %v (min %v, max %v) from starting the emulator to the first answer; of it init %v (the emulator's INIT REPORT, median)",
			c.name, colds[2].Round(100*time.Microsecond), colds[0].Round(100*time.Microsecond), colds[4].Round(100*time.Microsecond), median(inits))
	}
}

func median(ds []time.Duration) time.Duration {
	ds = slices.Clone(ds)
	slices.Sort(ds)
	return ds[len(ds)/2].Round(100 * time.Microsecond)
}
