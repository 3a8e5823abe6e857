package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/proxy/config"
	"github.com/mcp-elicitation/elicitation/internal/testenv"
)

// binary is the proxy built once for the tests that run it as a process.
// Those tests drive a Node.js upstream and skip under -short, so -short
// builds nothing.
var binary string

func TestMain(m *testing.M) {
	if os.Getenv(relayEnv) == "1" {
		os.Exit(relay(os.Args[1:]))
	}
	flag.Parse()
	if testing.Short() {
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "mcp-elicitation-proxy-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "mcp-elicitation-proxy")
	if out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building the proxy: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func repoRoot(t testing.TB) string { return testenv.Root(t) }

// nodeModule returns the path of an npm binary, failing with the fix when
// the npm packages are not installed.
func nodeModule(t testing.TB, bin string) string {
	t.Helper()
	testenv.Node(t)
	return testenv.NodeModule(t, filepath.Join(".bin", bin))
}

func writeConfig(t testing.TB, yaml string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(p, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestVersionAndHelp(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--version"}, "mcp-elicitation-proxy "},
		{[]string{"--help"}, "Usage:\n  mcp-elicitation-proxy --config config.yaml"},
		{[]string{"-h"}, "MCP_ELICITATION_PROXY_CONFIG"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(tt.args, func(string) string { return "" }, &stdout, &stderr)
		if code != 0 || !strings.Contains(stdout.String(), tt.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want %q on stdout", tt.args, code, stdout.String(), stderr.String(), tt.want)
		}
	}
}

func TestConfigurationErrors(t *testing.T) {
	bad := writeConfig(t, "upstream:\n  url: http://h/mcp\n  args: [x]\n")
	typo := writeConfig(t, "upstream:\n  url: http://127.0.0.1:1/mcp\ntools:\n  echo:\n    requird: [a]\n")
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"no config", nil, nil, "no configuration: pass --config config.yaml or set MCP_ELICITATION_PROXY_CONFIG"},
		{"bad config", []string{"--config", bad}, nil, bad + ":3: upstream.args: is only valid with upstream.command"},
		{"bad config from env", nil, map[string]string{"MCP_ELICITATION_PROXY_CONFIG": bad}, bad + ":3: upstream.args"},
		{"missing file", []string{"--config", bad + ".nope"}, nil, "reading config"},
		{"extra argument", []string{"--config", bad, "serve"}, nil, `unexpected argument "serve"`},
		{"bad state key", []string{"--config", writeConfig(t, "upstream:\n  url: http://127.0.0.1:1/mcp\n")}, map[string]string{"MCP_ELICITATION_PROXY_STATE_KEY": "c2hvcnQ="}, `MCP_ELICITATION_PROXY_STATE_KEY: request state key: the secret of key "k0" is 5 bytes; at least 32 are needed`},
		{"unknown key with --strict-config", []string{"--config", typo, "--strict-config"}, nil, typo + `:5: tools.echo.requird: unknown key; did you mean "required"?`},
		{"bad log level", []string{"--config", bad, "--log-level", "loud"}, nil, `invalid log level "loud"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(tt.args, func(k string) string { return tt.env[k] }, &stdout, &stderr)
			if code != 2 || !strings.Contains(stderr.String(), tt.want) || stdout.Len() != 0 {
				t.Errorf("exit %d, stderr %q, stdout %q; want exit 2 and %q", code, stderr.String(), stdout.String(), tt.want)
			}
		})
	}
}

// TestStdioEndToEnd runs the built proxy as an MCP client would, on the
// manual test's configuration, and checks discovery, forwarding and
// elicitation.
func TestStdioEndToEnd(t *testing.T) {
	nodeModule(t, "mcp-server-everything")
	root := repoRoot(t)
	cmd := exec.Command(binary, "--config", filepath.Join(root, "examples", "manual-everything.config.yaml"))
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	var asked []*mcp.ElicitParams
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked = append(asked, req.Params)
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"message": "typed by the user"}}, nil
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr.String())
	}
	defer cs.Close()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	if !strings.Contains(","+strings.Join(names, ",")+",", ",echo,") {
		t.Errorf("echo not listed: %q", names)
	}
	call := func(args map[string]any) string {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: args})
		if err != nil {
			t.Fatal(err)
		}
		return res.Content[0].(*mcp.TextContent).Text
	}
	if got := call(map[string]any{"message": "hi"}); got != "Echo: hi" {
		t.Errorf("echo with message: %q", got)
	}
	if got := call(map[string]any{}); got != "Echo: typed by the user" {
		t.Errorf("echo without message: %q", got)
	}
	if len(asked) != 1 || asked[0].Message != "The echo tool needs a message. What should it echo?" {
		t.Errorf("forms: %+v", asked)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "get-env", Arguments: map[string]any{}})
	if err != nil || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "visible-through-upstream-env") {
		t.Errorf("get-env does not show upstream.env: %v %v", res, err)
	}
}

// descendants lists the processes below pid, from /proc.
func descendants(t testing.TB, pid int) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatalf("reading /proc: %v", err)
	}
	children := map[int][]int{}
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, _, ok := procStat(p); ok {
			children[ppid] = append(children[ppid], p)
		}
	}
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}

// procStat reads a process's parent and state ('Z' for a zombie).
func procStat(pid int) (ppid int, state byte, ok bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+4 > len(s) {
		return 0, 0, false
	}
	fields := strings.Fields(s[i+2:])
	if len(fields) < 2 {
		return 0, 0, false
	}
	ppid, _ = strconv.Atoi(fields[1])
	return ppid, fields[0][0], true
}

func alive(pid int) bool {
	_, state, ok := procStat(pid)
	return ok && state != 'Z'
}

// TestNoOrphans checks that the upstream's whole process tree ends with the
// proxy, whether the client disconnects or the proxy is terminated, also
// when the upstream command starts the server as a grandchild (as npx does).
func TestNoOrphans(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Fatal("this test reads the process table from /proc (Linux)")
	}
	script := nodeModule(t, "mcp-server-everything")
	node, _ := exec.LookPath("node")
	configs := map[string]string{
		"direct child": fmt.Sprintf("upstream:\n  command: %q\n  args: [%q]\n", node, script),
		// The shell stays as the parent of node, like npx.
		"grandchild": fmt.Sprintf("upstream:\n  command: sh\n  args: [-c, %q]\n", node+" "+script+"; exit $?"),
	}
	for name, yaml := range configs {
		for _, stop := range []string{"stdin closed", "SIGTERM", "SIGINT"} {
			t.Run(name+"/"+stop, func(t *testing.T) {
				cmd := exec.Command(binary, "--config", writeConfig(t, yaml))
				cmd.Dir = repoRoot(t)
				in, _ := cmd.StdinPipe()
				out, _ := cmd.StdoutPipe()
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				defer cmd.Process.Kill()
				// One request proves the upstream is up.
				msg := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n"
				in.Write([]byte(msg))
				line, err := bufio.NewReader(out).ReadBytes('\n')
				if err != nil || !json.Valid(line) {
					t.Fatalf("no initialize response: %q %v\n%s", line, err, stderr.String())
				}
				tree := descendants(t, cmd.Process.Pid)
				wantProcs := 1
				if name == "grandchild" {
					wantProcs = 2
				}
				if len(tree) < wantProcs {
					t.Fatalf("upstream process tree %v, want at least %d processes", tree, wantProcs)
				}
				switch stop {
				case "stdin closed":
					in.Close()
				case "SIGTERM":
					cmd.Process.Signal(syscall.SIGTERM)
				case "SIGINT":
					cmd.Process.Signal(syscall.SIGINT)
				}
				done := make(chan error, 1)
				go func() { done <- cmd.Wait() }()
				select {
				case err := <-done:
					if err != nil {
						t.Errorf("proxy exit: %v\n%s", err, stderr.String())
					}
					// A clean shutdown is not an error (#38).
					if strings.Contains(stderr.String(), "level=ERROR") {
						t.Errorf("the clean shutdown logged an error:\n%s", stderr.String())
					}
				case <-time.After(30 * time.Second):
					t.Fatalf("the proxy did not exit after %s\n%s", stop, stderr.String())
				}
				// The proxy has sent SIGKILL to the group before exiting; on a
				// loaded machine a killed process can take a moment to leave
				// the process table.
				deadline := time.Now().Add(time.Second)
				for _, pid := range tree {
					for alive(pid) && time.Now().Before(deadline) {
						time.Sleep(5 * time.Millisecond)
					}
					if alive(pid) {
						t.Errorf("process %d of the upstream outlived the proxy", pid)
						syscall.Kill(pid, syscall.SIGKILL)
					}
				}
			})
		}
	}
}

// TestUpstreamRestart checks that a stdio upstream that dies is reported
// and restarted, and that calls work again afterwards.
func TestUpstreamRestart(t *testing.T) {
	script := nodeModule(t, "mcp-server-everything")
	node, _ := exec.LookPath("node")
	cmd := exec.Command(binary, "--config", writeConfig(t, fmt.Sprintf("upstream:\n  command: %q\n  args: [%q]\n", node, script)))
	cmd.Dir = repoRoot(t)
	var stderr testenv.SyncBuffer
	cmd.Stderr = &stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "restart"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	echo := func() (string, error) {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "again"}})
		if err != nil {
			return "", err
		}
		return res.Content[0].(*mcp.TextContent).Text, nil
	}
	if got, err := echo(); err != nil || got != "Echo: again" {
		t.Fatalf("echo before: %q %v", got, err)
	}
	tree := descendants(t, cmd.Process.Pid)
	if len(tree) == 0 {
		t.Fatal("no upstream process")
	}
	syscall.Kill(tree[0], syscall.SIGKILL)
	for !strings.Contains(stderr.String(), "upstream reconnected") {
		if ctx.Err() != nil {
			t.Fatalf("the upstream was not restarted:\n%s", stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !strings.Contains(stderr.String(), "upstream connection lost") || !strings.Contains(stderr.String(), "signal: killed") {
		t.Errorf("the upstream's death was not reported clearly:\n%s", stderr.String())
	}
	if got, err := echo(); err != nil || got != "Echo: again" {
		t.Errorf("echo after restart: %q %v", got, err)
	}
}

// TestInspector drives the proxy with the MCP Inspector CLI 2.x (on Node 22,
// with a scratch HOME: it keeps a catalog under ~/.mcp-inspector), on stdio
// and on streamable HTTP.
func TestInspector(t *testing.T) {
	t.Parallel() // waits on its Node peers
	inspector, node22 := nodeModule(t, "mcp-inspector"), testenv.Node22(t)
	nodeModule(t, "mcp-server-everything")
	root := repoRoot(t)
	cfg := filepath.Join(root, "examples", "manual-everything.config.yaml")

	// HTTP mode: the proxy listens; the inspector connects by URL.
	addr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
	srv := exec.Command(binary, "--config", cfg, "--http", addr)
	srv.Dir = root
	var srvErr testenv.SyncBuffer
	srv.Stderr = &srvErr
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		srv.Process.Signal(syscall.SIGTERM)
		srv.Wait()
	}()
	for !strings.Contains(srvErr.String(), "serving MCP over streamable HTTP") {
		if srv.ProcessState != nil || strings.Contains(srvErr.String(), "level=ERROR") {
			t.Fatalf("the HTTP proxy did not start:\n%s", srvErr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}

	transports := map[string][]string{
		"stdio": {"-e", "MCP_ELICITATION_PROXY_CONFIG=" + cfg, binary},
		"http":  {"http://" + addr + "/mcp", "--transport", "http"},
	}
	for name, target := range transports {
		t.Run(name, func(t *testing.T) {
			inspect := func(args ...string) string {
				t.Helper()
				ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
				defer cancel()
				full := append([]string{inspector, "--cli"}, target...)
				full = append(full, args...)
				full = append(full, inspectorConnectTimeout...)
				cmd := exec.CommandContext(ctx, node22, full...)
				cmd.Dir = root
				cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
				var stdout, stderr bytes.Buffer
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				if err := cmd.Run(); err != nil {
					t.Fatalf("inspector %v: %v\n%s\n%s", args, err, stdout.String(), stderr.String())
				}
				return stdout.String()
			}
			var list struct {
				Tools []struct {
					Name      string          `json:"name"`
					Execution json.RawMessage `json:"execution"`
				} `json:"tools"`
			}
			out := inspect("--method", "tools/list")
			if err := json.Unmarshal([]byte(out), &list); err != nil {
				t.Fatalf("tools/list output: %v\n%s", err, out)
			}
			found := false
			for _, tool := range list.Tools {
				if tool.Name == "echo" {
					found = string(tool.Execution) != ""
				}
				if tool.Name == "call_upstream_tool" || strings.HasPrefix(tool.Name, "upstream_") {
					t.Errorf("wrapper or prefixed tool %s", tool.Name)
				}
			}
			if !found {
				t.Errorf("echo (with its execution field) not listed:\n%s", out)
			}
			if out := inspect("--method", "tools/call", "--tool-name", "echo", "--tool-arg", "message=from-inspector"); !strings.Contains(out, "Echo: from-inspector") {
				t.Errorf("tools/call echo: %s", out)
			}
			// The inspector CLI declares no elicitation: the proxy says so.
			out = inspect("--method", "tools/call", "--tool-name", "echo")
			if !strings.Contains(out, `"reason": "elicitation_unsupported"`) || !strings.Contains(out, `"missing_or_ambiguous": [`) {
				t.Errorf("tools/call echo without message: %s", out)
			}
		})
	}
}

// TestDescribeRedacts: the start-up log line names the upstream without the
// credentials its URL may carry.
func TestDescribeRedacts(t *testing.T) {
	cfg := &config.Config{}
	cfg.Upstream.URL = "https://user:hunter2hunter2@mcp.example.com/mcp?api_key=hunter2hunter2"
	if got := describe(cfg); strings.Contains(got, "hunter2") {
		t.Errorf("describe() = %q", got)
	}
}

// TestOriginalManualConfig runs the built proxy on the Python original's
// examples/manual-everything.config.yaml, unchanged (it starts the
// reference server with npx), and makes the checks its
// docs/manual-inspector-test.md lists: echo listed natively, forwarding,
// elicitation with the configured copy, upstream.env visible to the
// upstream's environment tool, and, with message added to
// sensitive_name_markers as those docs say, a block without a form.
func TestOriginalManualConfig(t *testing.T) {
	t.Parallel() // waits on its Node peers
	nodeModule(t, "mcp-server-everything")
	if _, err := exec.LookPath("npx"); err != nil {
		t.Fatalf("npx is needed to run the original's configuration unchanged: %v", err)
	}
	root := repoRoot(t)
	original, err := os.ReadFile(filepath.Join(root, "internal", "proxy", "config", "testdata", "original", "manual-everything.config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	sensitive := strings.Replace(string(original), "policies:\n  sensitive_required:\n    enabled: true\n",
		"policies:\n  sensitive_required:\n    enabled: true\n    sensitive_name_markers:\n      - message\n", 1)
	if sensitive == string(original) {
		t.Fatal("the original's policies section was not found")
	}
	start := func(t *testing.T, yaml string, forms *[]*mcp.ElicitParams) *mcp.ClientSession {
		cmd := exec.Command(binary, "--config", writeConfig(t, yaml), "--strict-config")
		cmd.Dir = root
		var stderr testenv.SyncBuffer
		cmd.Stderr = &stderr
		client := mcp.NewClient(&mcp.Implementation{Name: "manual"}, &mcp.ClientOptions{
			ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				*forms = append(*forms, req.Params)
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"message": "completed through elicitation"}}, nil
			},
		})
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			t.Fatalf("connect: %v\n%s", err, stderr.String())
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	call := func(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return res
	}
	text := func(res *mcp.CallToolResult) string { return res.Content[0].(*mcp.TextContent).Text }

	t.Run("as shipped", func(t *testing.T) {
		var forms []*mcp.ElicitParams
		cs := start(t, string(original), &forms)
		if got := cs.InitializeResult().ServerInfo.Name; got != "mcp-elicitation-proxy-manual-everything" {
			t.Errorf("server name %q", got)
		}
		tools, err := cs.ListTools(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		echo := false
		for _, tl := range tools.Tools {
			echo = echo || tl.Name == "echo"
			if tl.Name == "call_upstream_tool" || strings.HasPrefix(tl.Name, "upstream_") {
				t.Errorf("wrapper or prefixed tool %s", tl.Name)
			}
		}
		if !echo {
			t.Error("echo not listed")
		}
		if got := text(call(t, cs, "echo", map[string]any{"message": "hello from mcp-elicitation-proxy v0.1.0"})); got != "Echo: hello from mcp-elicitation-proxy v0.1.0" {
			t.Errorf("forwarded: %q", got)
		}
		if got := text(call(t, cs, "echo", map[string]any{})); got != "Echo: completed through elicitation" {
			t.Errorf("elicited: %q", got)
		}
		if len(forms) != 1 || forms[0].Message != "To complete the proxy test, provide the message to send to the echo tool." {
			t.Errorf("forms %+v", forms)
		}
		if got := text(call(t, cs, "get-env", map[string]any{})); !strings.Contains(got, `"MCP_ELICITATION_PROXY_MANUAL_TEST": "env-ok"`) {
			t.Errorf("get-env: %.300s", got)
		}
	})
	t.Run("message as a sensitive marker", func(t *testing.T) {
		var forms []*mcp.ElicitParams
		cs := start(t, sensitive, &forms)
		res := call(t, cs, "echo", map[string]any{})
		if !strings.Contains(text(res), `"reason":"sensitive_required_field"`) || res.IsError || len(forms) != 0 {
			t.Errorf("blocked: isError=%v forms=%d %s", res.IsError, len(forms), text(res))
		}
		if got := text(call(t, cs, "echo", map[string]any{"message": "explicit"})); got != "Echo: explicit" {
			t.Errorf("explicit message: %q", got)
		}
	})
}

// TestInspectorDocCommands runs the Inspector CLI commands of
// docs/manual-inspector-test.md as written (with the built binary for
// bin/mcp-elicitation-proxy) against the real Inspector 2.x on Node 22, so
// that the page's argument order stays one the Inspector parses.
// inspectorConnectTimeout is what the Inspector CLI gives the proxy to
// start in these tests: its default, 15 s, was too short beside a second
// go test ./... at load 25, for the proxy and its Node upstream. A guard
// for a busy machine, not a speed claim.
var inspectorConnectTimeout = []string{"--connect-timeout", "180000"}

func TestInspectorDocCommands(t *testing.T) {
	t.Parallel() // waits on its Node peers
	inspector, node22 := nodeModule(t, "mcp-inspector"), testenv.Node22(t)
	nodeModule(t, "mcp-server-everything")
	root := repoRoot(t)
	doc, err := os.ReadFile(filepath.Join(root, "docs", "manual-inspector-test.md"))
	if err != nil {
		t.Fatal(err)
	}
	var target []string
	var commands [][]string
	for _, line := range strings.Split(string(doc), "\n") {
		line = strings.TrimSpace(line)
		if v, ok := strings.CutPrefix(line, `C="`); ok {
			target = strings.Fields(strings.TrimSuffix(v, `"`))
		}
		if rest, ok := strings.CutPrefix(line, "$I $C "); ok {
			rest, _, _ = strings.Cut(rest, "#")
			commands = append(commands, strings.Fields(rest))
		}
	}
	if len(target) == 0 || len(commands) < 4 {
		t.Fatalf("the page's CLI commands were not found (C=%q, %d commands)", target, len(commands))
	}
	for i, a := range target {
		if a == "bin/mcp-elicitation-proxy" {
			target[i] = binary
		}
	}
	wants := []string{`"name": "echo"`, `"text": "Echo: hello"`, `elicitation_unsupported`, `visible-through-upstream-env`}
	for i, args := range commands {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
			defer cancel()
			full := slices.Concat([]string{inspector, "--cli"}, target, args, inspectorConnectTimeout)
			cmd := exec.CommandContext(ctx, node22, full...)
			cmd.Dir = root
			cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
			out, err := cmd.CombinedOutput()
			if err != nil || (i < len(wants) && !strings.Contains(string(out), wants[i])) {
				t.Errorf("%v: %v\n%s", args, err, out)
			}
		})
	}
}

// TestInstallFromClone runs the install command docs/proxy.md and the
// README give (the module is not published, so it installs from a clone)
// and the installed binary.
func TestInstallFromClone(t *testing.T) {
	testenv.Slow(t, "go install")
	root := repoRoot(t)
	doc, err := os.ReadFile(filepath.Join(root, "docs", "proxy.md"))
	if err != nil {
		t.Fatal(err)
	}
	const install = "go install ./cmd/mcp-elicitation-proxy"
	if !strings.Contains(string(doc), install) {
		t.Fatalf("docs/proxy.md no longer says %q", install)
	}
	gobin := t.TempDir()
	cmd := exec.Command("go", strings.Fields(install)[1:]...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOBIN="+gobin)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", install, err, out)
	}
	out, err := exec.Command(filepath.Join(gobin, "mcp-elicitation-proxy"), "--version").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "mcp-elicitation-proxy ") {
		t.Errorf("the installed binary: %v %s", err, out)
	}
}
