// Command elicitation runs the elicitation service locally: the MCP
// endpoint, the review page and the submission endpoint in one binary, on
// an embedded store (or on a DynamoDB table), plus the operator commands.
//
//	elicitation serve [flags]        run the service (the default)
//	elicitation audit [flags] ID     print a request's audit trail
//	elicitation cleanup [flags]      remove requests past their retention
//	elicitation keys [flags] create|revoke|list   administer API keys
//	elicitation connect [flags] HOST  print an MCP host's configuration
//	elicitation version
//
// Run "elicitation serve -h" for the flags; each can also be set with the
// environment variable named in its help.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

func main() {
	// Most of a tool call's CPU is the MCP SDK's per-request JSON buffers and
	// the garbage they make (docs/benchmarks.md): trade some memory for less
	// collection unless the operator chose otherwise.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr, os.Getenv); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "elicitation:", err)
		}
		os.Exit(2)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	cmd := "serve"
	if len(args) > 0 && args[0] != "" && args[0][0] != '-' {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "serve":
		cfg, err := parseServe(args, stderr, getenv)
		if err != nil {
			return err
		}
		m, err := Start(ctx, cfg, stderr)
		if err != nil {
			return err
		}
		m.PrintWelcome(stderr)
		select {
		case <-ctx.Done():
			return m.Close()
		case err := <-m.Failed():
			return errors.Join(err, m.Close())
		}
	case "audit":
		return runAudit(ctx, args, stdout, stderr, getenv)
	case "cleanup":
		return runCleanup(ctx, args, stdout, stderr, getenv)
	case "compact":
		return runCompact(ctx, args, stdout, stderr, getenv)
	case "keys":
		return runKeys(ctx, args, stdout, stderr, getenv)
	case "connect":
		return runConnect(args, stdout, stderr, getenv)
	case "version":
		_, err := fmt.Fprintln(stdout, "elicitation", version)
		return err
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	return fmt.Errorf("unknown command %q", cmd)
}

const usage = `Usage: elicitation <command> [flags]

Commands:
  serve     run the MCP endpoint, the review page and the submission endpoint (default)
  audit     print a request's audit trail:   elicitation audit [flags] ELICITATION_ID
  cleanup   remove requests past their retention
  compact   shrink the embedded store's file to what it holds (run it while the server is stopped)
  keys      administer API keys: elicitation keys [flags] create --principal NAME | list | revoke ID
  connect   print the configuration that connects an MCP host: elicitation connect [--url URL] HOST
  version   print the version

Run "elicitation <command> -h" for a command's flags.
`
