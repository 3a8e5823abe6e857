// Command elicitation runs the elicitation service locally: the MCP
// endpoint, the review page and the submission endpoint in one binary, on
// an embedded store (or on a DynamoDB table), plus the operator commands.
//
//	elicitation serve [flags]        run the service
//	elicitation call [flags] TOOL [name=value …]   call one tool on a running server
//	elicitation connect [flags] HOST  print an MCP host's configuration
//	elicitation audit [flags] ID     print a request's audit trail
//	elicitation audit verify [ID...] check the audit trails' hash chains
//	elicitation cleanup [flags]      remove requests past their retention
//	elicitation delegations [--all]  list the reviewers' delegations (out of office)
//	elicitation compact [flags]      shrink the embedded store's file
//	elicitation check [flags]        check every page of the embedded store's file
//	elicitation keys create|revoke|list [flags]   administer API keys
//	elicitation health [--addr ADDR]  ask a running server's /healthz
//	elicitation receipt --issuer URL [flags] RECEIPT   check an approval receipt
//	elicitation version
//
// Without a command it prints the usage and exits 2. Run "elicitation
// serve -h" for the flags; each can also be set with the environment
// variable named in its help.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
)

// version is set at build time with -ldflags "-X main.version=…";
// otherwise init sets it to the module version go install recorded.
var version string

func init() {
	if version == "" {
		version = moduleVersion(debug.ReadBuildInfo())
	}
}

// moduleVersion is the main module's version in bi ("v1.2.3" after go
// install …@v1.2.3), or "dev" when there is none (a build in a checkout
// may record "(devel)" or nothing).
func moduleVersion(bi *debug.BuildInfo, ok bool) string {
	if !ok || bi.Main.Version == "" || bi.Main.Version == "(devel)" {
		return "dev"
	}
	return bi.Main.Version
}

func main() {
	gcDefaults(os.Getenv)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr, os.Getenv); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "elicitation:", err)
		}
		if errors.Is(err, errUnhealthy) {
			os.Exit(1)
		}
		os.Exit(2)
	}
}

// The garbage collector's defaults, each unless the operator set its
// environment variable (docs/configuration.md, "Memory").
const (
	// Most of a tool call's CPU is the MCP SDK's per-request JSON buffers
	// and the garbage they make: trade some memory for less collection.
	defaultGCPercent = 400
	// A soft limit on the heap: under it the collector runs as GOGC says;
	// near it, it collects sooner, so that a burst of calls (10,000
	// waiting elicit_await calls arriving at once, each leaving the SDK's
	// garbage) does not grow the heap to five times what is live
	// (docs/benchmarks.md, #24.1). Past it the process keeps working, the
	// collector taking up to half the CPU.
	defaultMemoryLimit = 256 << 20
)

// gcDefaults sets the collector's defaults where getenv says the operator
// did not choose (GOGC, GOMEMLIMIT).
func gcDefaults(getenv func(string) string) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(defaultGCPercent)
	}
	if getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(defaultMemoryLimit)
	}
}

// errNoCommand: "elicitation" alone, which prints the usage (exit 2)
// rather than starting a server nobody asked for.
var errNoCommand = errors.New("no command given (elicitation serve runs the server)")

// command is one subcommand.
type command func(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error

var commands = map[string]command{
	"serve":       runServe,
	"audit":       runAudit,
	"cleanup":     runCleanup,
	"delegations": runDelegations,
	"compact":     runCompact,
	"check":       runCheck,
	"keys":        runKeys,
	"connect": func(_ context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
		return runConnect(args, stdout, stderr, getenv)
	},
	"call":    runCall,
	"health":  runHealth,
	"receipt": runReceipt,
	"version": func(_ context.Context, _ []string, stdout, _ io.Writer, _ func(string) string) error {
		_, err := fmt.Fprintln(stdout, "elicitation", version)
		return err
	},
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errNoCommand
	}
	name, args := args[0], args[1:]
	switch name {
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	if cmd, ok := commands[name]; ok {
		return cmd(ctx, args, stdout, stderr, getenv)
	}
	fmt.Fprint(stderr, usage)
	if strings.HasPrefix(name, "-") {
		return fmt.Errorf("flags come after the command: elicitation serve %s", strings.Join(append([]string{name}, args...), " "))
	}
	return fmt.Errorf("unknown command %q", name)
}

// runServe runs the server until ctx ends or a listener fails.
func runServe(ctx context.Context, args []string, _, stderr io.Writer, getenv func(string) string) error {
	cfg, err := parseServe(args, stderr, getenv)
	if err != nil {
		return err
	}
	m, err := Start(ctx, cfg, stderr)
	if err != nil {
		return listenHint(err, cfg)
	}
	m.PrintWelcome(stderr)
	select {
	case <-ctx.Done():
		return m.Close()
	case err := <-m.Failed():
		return errors.Join(err, m.Close())
	}
}

// listenHint adds to "address already in use" how to choose another
// address: the flag and its environment variable.
func listenHint(err error, cfg Config) error {
	if !errors.Is(err, syscall.EADDRINUSE) {
		return err
	}
	other := "127.0.0.1:8081"
	if host, port, e := net.SplitHostPort(cfg.Addr); e == nil {
		if n, e := strconv.Atoi(port); e == nil && n > 0 && n < 65535 {
			other = net.JoinHostPort(host, strconv.Itoa(n+1))
		}
	}
	hint := fmt.Sprintf("another program (perhaps another elicitation serve) is listening there: stop it, or choose another address with --addr %s or ELICITATION_ADDR=%s", other, other)
	if cfg.ReviewAddr != "" {
		hint += " (the review listener: --review-addr or ELICITATION_REVIEW_ADDR)"
	}
	return fmt.Errorf("%w\n%s", err, hint)
}

const usage = `Usage: elicitation <command> [flags]

Commands:
  serve     run the MCP endpoint, the review page and the submission endpoint: elicitation serve [--addr 127.0.0.1:8080]
  call      call one tool on a running server:   elicitation call [flags] TOOL [name=value …]
  connect   print the configuration that connects an MCP host: elicitation connect [--url URL] HOST
  audit     print a request's audit trail:   elicitation audit [flags] ELICITATION_ID
            or check the trails' hash chains (all, or those named): elicitation audit verify [flags] [ELICITATION_ID…]
  cleanup   remove requests past their retention
  delegations  list the reviewers' delegations (out of office) as JSON: elicitation delegations [--all]
  compact   shrink the embedded store's file to what it holds (run it while the server is stopped)
  check     check every page of the embedded store's file (run it while the server is stopped)
  keys      administer API keys: elicitation keys create --principal NAME | list | revoke ID
  health    ask a running server's /healthz (exit 0 when it answers ok, else 1): elicitation health [--addr ADDR]
  receipt   check an approval receipt against a deployment's key set: elicitation receipt --issuer URL [--elicitation ID] RECEIPT
  version   print the version

Run "elicitation <command> -h" for a command's flags.
`
