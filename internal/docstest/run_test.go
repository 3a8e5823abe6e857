package docstest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// LocalURL is the address the docs give the local server; commands aimed
// at it run against the server the test started (Checker.Server).
const LocalURL = "http://127.0.0.1:8080"

// runnable tells whether a block's commands may be run: a block that
// starts its own server (a command sent to the background with &, or the
// proxy, which the docs run on the same address) is checked, not run.
func runnable(b Block) bool {
	for _, line := range strings.Split(b.Text, "\n") {
		if strings.HasSuffix(strings.TrimSpace(stripComment(line)), "&") {
			return false
		}
	}
	return !strings.Contains(b.Text, "mcp-elicitation-proxy")
}

func stripComment(line string) string {
	if i := strings.Index(line, " #"); i >= 0 {
		return line[:i]
	}
	return line
}

// run runs one command against the started server if it is one the docs
// test runs: the Inspector CLI or curl aimed at the local server, and our
// commands (also as go run ./cmd/elicitation) that neither serve nor need
// a store elsewhere (call, connect, version, keys create/list, cleanup on
// a scratch data directory). It
// reports whether it ran the command and what went wrong.
func (c *Checker) run(ctx context.Context, args []string) (bool, error) {
	if c.Server == "" {
		return false, nil
	}
	for _, a := range args {
		if isPlaceholder(a) || strings.Contains(a, "<output>") {
			return false, nil // the reader fills something in first
		}
	}
	argv, env := c.runnableArgv(args)
	if argv == nil {
		return false, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = c.Root, &out, &out
	cmd.Env = append(append(os.Environ(), c.Env...), env...)
	if p, ok := lookPathIn(argv[0], cmd.Env); ok {
		cmd.Path = p // the program as the PATH of c.Env finds it (Node 22 for the Inspector)
	}
	err := cmd.Run()
	if err != nil {
		return true, fmt.Errorf("run against the started server: %v\n%s", err, tail(out.String()))
	}
	if strings.Contains(out.String(), `"isError": true`) {
		return true, fmt.Errorf("run against the started server: the tool call failed:\n%s", tail(out.String()))
	}
	return true, nil
}

// runnableArgv returns the command line that runs args against the
// started server, and what it adds to the environment; nil if args is not
// run. Our commands get ELICITATION_ADDR of the started server, so that
// "elicitation call …" without --url reaches it as it reaches the
// reader's.
func (c *Checker) runnableArgv(args []string) (argv, env []string) {
	prog := args[0]
	if prog == "go" && len(args) > 2 && args[1] == "run" && strings.TrimSuffix(strings.TrimPrefix(args[2], "./"), "/") == "cmd/elicitation" {
		prog, args = "elicitation", args[2:]
	}
	switch {
	case prog == "node" && len(args) > 1 && strings.HasSuffix(args[1], "node_modules/.bin/mcp-inspector"), prog == "curl":
		if argv = rewrite(args, c.Server); !changed(args, argv) {
			return nil, nil // not aimed at the local server
		}
		return argv, nil
	case filepath.Base(prog) == "elicitation" && c.Bin["elicitation"] != "" && safeToRun(args[1:]):
		return append([]string{c.Bin["elicitation"]}, args[1:]...), []string{"ELICITATION_ADDR=" + strings.TrimPrefix(c.Server, "http://")}
	}
	return nil, nil
}

// lookPathIn finds name on the last PATH of env, as a shell started with
// env would; exec.Command looks on the test's own PATH.
func lookPathIn(name string, env []string) (string, bool) {
	if strings.Contains(name, "/") {
		return "", false
	}
	var path string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	for _, dir := range filepath.SplitList(path) {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, true
		}
	}
	return "", false
}

func rewrite(args []string, server string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = strings.ReplaceAll(a, LocalURL, server)
	}
	return out
}

func changed(a, b []string) bool {
	for i := range a {
		if a[i] != b[i] {
			return true
		}
	}
	return false
}

// safeToRun: elicitation subcommands that end on their own and touch only
// the scratch data directory.
func safeToRun(args []string) bool {
	words := strings.Join(args, " ")
	if strings.Contains(words, "dynamodb") || strings.Contains(words, "--data-dir") {
		return false
	}
	if len(args) == 0 {
		return false
	}
	switch args[0] {
	case "connect", "version", "help", "cleanup", "call":
		return true
	case "keys":
		return strings.Contains(words, " create") || strings.Contains(words, " list")
	}
	return false
}

func tail(s string) string {
	if len(s) > 2000 {
		return "…" + s[len(s)-2000:]
	}
	return s
}
