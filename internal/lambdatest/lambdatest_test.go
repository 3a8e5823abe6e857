//go:build unix

// Package lambdatest runs the Lambda functions' bootstraps, built as `sam
// build` builds them (infra/lambda.mk), under the AWS Lambda Runtime
// Interface Emulator: a real Lambda runtime API in front of each bootstrap,
// one process per function, invoked with API Gateway HTTP API events.
//
// Missing parts (make, the Go toolchain, the emulator's module) fail the
// tests with a message naming the fix; nothing is skipped.
package lambdatest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/mcp-elicitation/elicitation/internal/testenv"
)

// RIEModule is the emulator's module and version (FIELD-NOTES).
const RIEModule = "github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie@v0.0.0-20261030222936-bef5c4ba774d"

// Root returns the module root (the directory holding go.mod).
func Root(t testing.TB) string { return testenv.Root(t) }

// RIE returns the emulator's path: $AWS_LAMBDA_RIE, else <root>/.bin/aws-lambda-rie,
// which it installs with `go install` (from the module proxy) when missing.
func RIE(t testing.TB) string {
	t.Helper()
	testenv.Slow(t, "Lambda emulator")
	if p := os.Getenv("AWS_LAMBDA_RIE"); p != "" {
		return p
	}
	return testenv.GoTool(t, RIEModule, "aws-lambda-rie")
}

// Build builds the function with the given template logical id (for
// example "McpFunction") with `make -f infra/lambda.mk build-<id>`, as
// `sam build` runs it, for this machine's architecture, and returns the
// bootstrap's path.
func Build(t testing.TB, logicalID, dir string) string {
	t.Helper()
	testenv.Slow(t, "Lambda emulator")
	if _, err := exec.LookPath("make"); err != nil {
		t.Fatal("lambdatest: make is not on PATH; the bootstraps are built by infra/lambda.mk (apt-get install -y make)")
	}
	cmd := exec.Command("make", "--no-print-directory", "-f", "infra/lambda.mk", "build-"+logicalID,
		"ARTIFACTS_DIR="+dir, "LAMBDA_GOARCH="+runtime.GOARCH)
	cmd.Dir = Root(t)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("lambdatest: build %s: %v\n%s", logicalID, err, out)
	}
	return filepath.Join(dir, "bootstrap")
}

// FreePort returns a free TCP port on the loopback interface.
func FreePort(t testing.TB) int { return testenv.FreePort(t) }

// Function is one bootstrap running under its own emulator. The emulator
// takes one invocation at a time (a second concurrent one crashes it), so
// Invoke serializes.
type Function struct {
	Name string
	// Started is when Start started the emulator (and with it the
	// bootstrap's process).
	Started time.Time
	// how Start ran it, for Again
	bootstrap string
	timeout   time.Duration
	env       []string
	limits    Limits
	sandbox   *sandbox // the cgroups of limits; nil without

	url  string
	cmd  *exec.Cmd
	mu   sync.Mutex // one invocation at a time
	logs *testenv.SyncBuffer
	done chan struct{}
}

// Start runs bootstrap under the emulator with env (KEY=value) added to
// this process's environment minus any AWS_* variables, and stops it when
// the test ends. timeout is the function's timeout
// (AWS_LAMBDA_FUNCTION_TIMEOUT).
func Start(t testing.TB, name, bootstrap string, timeout time.Duration, env ...string) *Function {
	t.Helper()
	return StartLimited(t, name, bootstrap, timeout, Limits{}, env...)
}

// StartLimited is Start with the bootstrap held to limits (Limits says
// how); the emulator itself runs unlimited.
func StartLimited(t testing.TB, name, bootstrap string, timeout time.Duration, limits Limits, env ...string) *Function {
	t.Helper()
	rie := RIE(t)
	port, apiPort := FreePort(t), FreePort(t)
	run, memory, sb := bootstrap, 256, (*sandbox)(nil)
	if limits.MemoryMB > 0 {
		sb = newSandbox(t, name, limits)
		run, memory = sb.wrapper(t, bootstrap), limits.MemoryMB
	}
	cmd := exec.Command(rie,
		"--runtime-interface-emulator-address", "127.0.0.1:"+strconv.Itoa(port),
		"--runtime-api-address", "127.0.0.1:"+strconv.Itoa(apiPort),
		run)
	cmd.Dir = filepath.Dir(bootstrap)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AWS_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env,
		"AWS_LAMBDA_FUNCTION_NAME="+name,
		"AWS_LAMBDA_FUNCTION_VERSION=$LATEST",
		"AWS_LAMBDA_FUNCTION_MEMORY_SIZE="+strconv.Itoa(memory),
		"AWS_LAMBDA_FUNCTION_TIMEOUT="+strconv.Itoa(int(timeout.Seconds())),
	)
	cmd.Env = append(cmd.Env, env...)
	f := &Function{Name: name, bootstrap: bootstrap, timeout: timeout, env: env, limits: limits, sandbox: sb, url: fmt.Sprintf("http://127.0.0.1:%d/2015-03-31/functions/function/invocations", port), cmd: cmd, logs: &testenv.SyncBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = f.logs, f.logs
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // the emulator and its bootstrap
	f.Started = time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatalf("lambdatest: start the emulator for %s: %v", name, err)
	}
	go func() { _ = cmd.Wait(); close(f.done) }()
	t.Cleanup(func() {
		// The process group this Start created: the emulator and the
		// bootstrap it runs, by the emulator's pid.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-f.done
		if t.Failed() {
			t.Logf("%s emulator output:\n%s", name, f.Logs())
		}
	})
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), 100*time.Millisecond)
		if err == nil {
			c.Close()
			return f
		}
		select {
		case <-f.done:
			t.Fatalf("lambdatest: the emulator for %s exited:\n%s", name, f.Logs())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("lambdatest: the emulator for %s did not listen within 10 s:\n%s", name, f.Logs())
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// Stop stops the emulator and its bootstrap now (the test's end would).
func (f *Function) Stop() {
	_ = syscall.Kill(-f.cmd.Process.Pid, syscall.SIGKILL)
	<-f.done
}

// Again starts the same bootstrap with the same configuration under a new
// emulator: a cold start.
func (f *Function) Again(t testing.TB) *Function {
	t.Helper()
	return StartLimited(t, f.Name, f.bootstrap, f.timeout, f.limits, f.env...)
}

// BuildHello builds the yardstick, an aws-lambda-go hello world
// (testdata/hello), with `make -f infra/lambda.mk lambda-hello`: the
// functions' flags, for this machine's architecture.
func BuildHello(t testing.TB, dir string) string {
	t.Helper()
	testenv.Slow(t, "Lambda emulator")
	cmd := exec.Command("make", "--no-print-directory", "-f", "infra/lambda.mk", "lambda-hello",
		"ARTIFACTS_DIR="+dir, "LAMBDA_GOARCH="+runtime.GOARCH)
	cmd.Dir = Root(t)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("lambdatest: build the hello world: %v\n%s", err, out)
	}
	return filepath.Join(dir, "bootstrap")
}

// Logs returns what the emulator and the bootstrap wrote so far.
func (f *Function) Logs() string { return f.logs.String() }

// Invoke sends one event and returns the function's response and the
// round trip's duration. A function error (the handler returned an error or
// crashed) fails the test.
func (f *Function) Invoke(t testing.TB, event []byte) (events.APIGatewayV2HTTPResponse, time.Duration) {
	t.Helper()
	raw, d := f.InvokeRaw(t, event)
	var resp events.APIGatewayV2HTTPResponse
	var fnErr struct {
		ErrorMessage string `json:"errorMessage"`
		ErrorType    string `json:"errorType"`
	}
	if json.Unmarshal(raw, &fnErr) == nil && fnErr.ErrorType != "" {
		t.Fatalf("%s: function error %s: %s\n%s", f.Name, fnErr.ErrorType, fnErr.ErrorMessage, f.Logs())
	}
	if err := json.Unmarshal(raw, &resp); err != nil || resp.StatusCode == 0 {
		t.Fatalf("%s: not an HTTP API response (%v): %s\n%s", f.Name, err, raw, f.Logs())
	}
	if resp.IsBase64Encoded {
		t.Fatalf("%s: a base64-encoded response body: %s", f.Name, raw)
	}
	return resp, d
}

// InvokeRaw sends one event and returns the raw invocation result.
func (f *Function) InvokeRaw(t testing.TB, event []byte) ([]byte, time.Duration) {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, f.url, bytes.NewReader(event))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s: invoke: %v\n%s", f.Name, err, f.Logs())
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	d := time.Since(start)
	if err != nil {
		t.Fatalf("%s: read the invocation result: %v", f.Name, err)
	}
	if res.StatusCode != http.StatusOK {
		t.Fatalf("%s: the emulator answered %s: %s\n%s", f.Name, res.Status, raw, f.Logs())
	}
	return raw, d
}

var (
	initRE   = regexp.MustCompile(`INIT REPORT\(durationMs: ([0-9.]+)\)`)
	reportRE = regexp.MustCompile(`REPORT RequestId: \S+\s+(?:Init Duration: [0-9.]+ ms\s+)?Duration: ([0-9.]+) ms`)
)

// InitDurations returns the init phase's durations the emulator reported
// (its "INIT REPORT" lines: from starting the bootstrap until it asks for
// the first event), one per start of the bootstrap.
func (f *Function) InitDurations() []time.Duration { return durations(initRE, f.Logs()) }

// WaitInitDurations is InitDurations once the INIT REPORT line has reached
// the logs: the emulator writes it before it answers, but its output comes
// through a pipe and may arrive after the answer. It waits at most 10 s
// (then it returns what the logs hold).
func (f *Function) WaitInitDurations() []time.Duration {
	out, _ := f.logs.WaitFor(10*time.Second, initRE.MatchString)
	return durations(initRE, out)
}

// Durations returns the invocations' durations the emulator reported (its
// REPORT lines), in order.
func (f *Function) Durations() []time.Duration { return durations(reportRE, f.Logs()) }

// WaitDurations is Durations once the logs hold at least n REPORT lines
// (they come through a pipe, and may arrive after the answer); it waits at
// most 10 s, then returns what the logs hold.
func (f *Function) WaitDurations(n int) []time.Duration {
	out, _ := f.logs.WaitFor(10*time.Second, func(s string) bool { return len(reportRE.FindAllStringIndex(s, -1)) >= n })
	return durations(reportRE, out)
}

func durations(re *regexp.Regexp, logs string) []time.Duration {
	var out []time.Duration
	for _, m := range re.FindAllStringSubmatch(logs, -1) {
		v, _ := strconv.ParseFloat(m[1], 64)
		out = append(out, time.Duration(v*float64(time.Millisecond)))
	}
	return out
}
