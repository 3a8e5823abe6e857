// Command mcp-elicitation-proxy is a transparent MCP proxy in front of one
// upstream MCP server. It passes the upstream's discovery on unchanged, asks
// the user (through the client's form elicitation) for missing required tool
// arguments, and refuses to ask for secrets.
//
// Usage:
//
//	mcp-elicitation-proxy --config config.yaml            # MCP on stdio
//	mcp-elicitation-proxy --config config.yaml --http :8080
//
// The configuration path may also come from MCP_ELICITATION_PROXY_CONFIG.
// Logs go to standard error; in stdio mode standard output carries only the
// protocol.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/compose"
	"github.com/mcp-elicitation/elicitation/internal/proxy"
	"github.com/mcp-elicitation/elicitation/internal/proxy/config"
	"github.com/mcp-elicitation/elicitation/internal/proxy/plan"
)

// version is set at build time with -ldflags "-X main.version=…"; otherwise
// the module version recorded by go install is used.
var version = ""

const (
	envConfig   = "MCP_ELICITATION_PROXY_CONFIG"
	envStateKey = "MCP_ELICITATION_PROXY_STATE_KEY"
	envLogLevel = "MCP_ELICITATION_PROXY_LOG_LEVEL"
)

func main() {
	tuneGC(os.Getenv)
	os.Exit(run(os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}

// tuneGC makes garbage collection rarer unless GOGC or GOMEMLIMIT say
// otherwise. The SDK allocates a fresh 32 KiB buffer for every JSON value it
// decodes, several per proxied call, while the proxy's live heap is a few
// megabytes: with the default GOGC=100 it collected every few dozen calls,
// which measurably added to each call's latency.
func tuneGC(getenv func(string) string) {
	if getenv("GOGC") == "" && getenv("GOMEMLIMIT") == "" {
		debug.SetGCPercent(1000)
	}
}

// run is the whole program; stdout is written only by --help and --version
// (in stdio mode the MCP transport owns the process's real stdout). It
// exits 2 for a mistake in the command line, environment or configuration
// and 1 when the proxy fails to start or serve.
func run(args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	f, done, err := parseFlags(args, stdout, stderr)
	if done || err != nil {
		return exitCode(err)
	}
	if f.showVersion {
		fmt.Fprintln(stdout, "mcp-elicitation-proxy", buildVersion())
		return 0
	}
	o, err := options(f, getenv, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "mcp-elicitation-proxy: %v\n", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	m, err := Start(ctx, o)
	if err != nil {
		o.Log.Error(err.Error())
		return 1
	}
	err = m.Run(ctx)
	if err != nil {
		o.Log.Error(err.Error())
	}
	if cerr := m.Close(); cerr != nil {
		o.Log.Error(cerr.Error())
	}
	if err != nil {
		return 1
	}
	return 0
}

func exitCode(err error) int {
	if err == nil {
		return 0
	}
	return 2
}

// flags are the command line.
type flags struct {
	configPath, httpAddr, logLevel string
	// reviewAddr overrides elicitation_service.embedded.listen.
	reviewAddr                string
	showVersion, strictConfig bool
	limits                    compose.Settings
}

// proxyWriteTimeout is the proxy's default --http-write-timeout: a
// proxied call may wait on its upstream and on the user's answer to a form
// for much longer than the elicitation service's longest await.
const proxyWriteTimeout = 10 * time.Minute

// limitNames are the local server's settings that the proxy's HTTP
// listener takes, under the same flag names and with the same checks.
var limitNames = []string{"mcp-max-sessions", "mcp-sessions-per-principal", "mcp-session-idle", "http-read-timeout", "http-write-timeout", "http-idle-timeout", "max-body"}

// proxyUsage replaces the service's usage text where it speaks of the
// service (its awaits, its payloads).
var proxyUsage = map[string]string{
	"http-write-timeout": "longest time to write one response, a proxied call that waits on its upstream or on a person's answer to a form included",
	"max-body":           "largest request body in bytes (413 beyond it)",
}

// parseFlags reads the command line; done reports that --help was
// answered. A parse error has been printed already.
func parseFlags(args []string, stdout, stderr io.Writer) (f flags, done bool, err error) {
	fs := flag.NewFlagSet("mcp-elicitation-proxy", flag.ContinueOnError)
	fs.SetOutput(stderr)
	for _, a := range args {
		if a == "-h" || a == "-help" || a == "--help" {
			fs.SetOutput(stdout)
		}
	}
	fs.StringVar(&f.configPath, "config", "", "path to the YAML configuration (default $"+envConfig+")")
	fs.StringVar(&f.httpAddr, "http", "", "serve MCP over streamable HTTP on this address (host:port) instead of stdio")
	fs.StringVar(&f.reviewAddr, "review-addr", "", "serve the embedded elicitation service's review pages on this address (host:port; port 0: any free port) instead of elicitation_service.embedded.listen")
	fs.BoolVar(&f.showVersion, "version", false, "print the version and exit")
	fs.BoolVar(&f.strictConfig, "strict-config", false, "refuse unknown configuration keys and ignored values instead of warning about them")
	fs.StringVar(&f.logLevel, "log-level", "", "log level: debug, info, warn or error (default $"+envLogLevel+" or info)")
	f.limits = compose.Defaults()
	f.limits.WriteTimeout = proxyWriteTimeout
	for _, row := range compose.Table {
		if slices.Contains(limitNames, row.Name) {
			usage := row.Usage
			if u, ok := proxyUsage[row.Name]; ok {
				usage = u
			}
			fs.Var(row.Value(&f.limits), row.Name, "with --http: "+usage)
		}
	}
	fs.Usage = func() { printUsage(fs) }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return f, true, nil
		}
		return f, true, err
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "mcp-elicitation-proxy: unexpected argument %q\n", fs.Arg(0))
		fs.Usage()
		return f, true, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if err := f.limits.Check(compose.Local); err != nil {
		fmt.Fprintf(stderr, "mcp-elicitation-proxy: %v\n", err)
		return f, true, err
	}
	return f, false, nil
}

func printUsage(fs *flag.FlagSet) {
	out := fs.Output()
	fmt.Fprintf(out, `mcp-elicitation-proxy: a transparent MCP proxy that elicits missing required
tool arguments and never elicits secrets.

Usage:
  mcp-elicitation-proxy --config config.yaml [--http host:port] [--review-addr host:port] [--strict-config]

MCP is served on stdio unless --http is given. Logs go to standard error.

Flags:
`)
	fs.PrintDefaults()
	fmt.Fprintf(out, `
Environment:
  %s   configuration path, when --config is not given
  %s  base64 key (at least 32 bytes) that signs multi round-trip
                                   request state; default: random per process
  %s  log level, when --log-level is not given
`, envConfig, envStateKey, envLogLevel)
}

// options turns the command line and the environment into Start's
// options: the logger, the loaded configuration (its warnings logged),
// the request-state key and the gate's API key.
func options(f flags, getenv func(string) string, stderr io.Writer) (Options, error) {
	o := Options{HTTP: f.httpAddr, Limits: f.limits, UpstreamStderr: stderr, Version: buildVersion()}
	log, err := logger(f.logLevel, getenv, stderr)
	if err != nil {
		return o, err
	}
	o.Log = log
	path := f.configPath
	if path == "" {
		path = getenv(envConfig)
	}
	if path == "" {
		return o, fmt.Errorf("no configuration: pass --config config.yaml or set %s", envConfig)
	}
	if o.Config, err = config.LoadWith(path, config.Options{Strict: f.strictConfig}); err != nil {
		return o, err
	}
	for _, w := range o.Config.Warnings {
		log.Warn("configuration: " + w.Error())
	}
	if f.reviewAddr != "" {
		s := o.Config.ElicitationService
		if s == nil || s.Embedded == nil {
			return o, fmt.Errorf("--review-addr: %s embeds no elicitation service (elicitation_service.embedded)", path)
		}
		s.Embedded.Listen = f.reviewAddr
	}
	if o.Sealer, err = stateSealer(getenv); err != nil {
		return o, err
	}
	if o.APIKey, o.SignInSecret, err = serviceSecrets(o.Config, getenv); err != nil {
		return o, fmt.Errorf("%s: %w", path, err)
	}
	return o, nil
}

// serviceSecrets reads the secrets the gate's elicitation service needs
// from the variables the configuration names: the API key for
// elicitation_service.url, the OpenID client secret for the embedded
// service's sign_in. A named variable that is not set is an error.
func serviceSecrets(cfg *config.Config, getenv func(string) string) (apiKey, signInSecret string, err error) {
	s := cfg.ElicitationService
	if s == nil {
		return "", "", nil
	}
	read := func(key, name string) (string, error) {
		if name == "" {
			return "", nil
		}
		if v := strings.TrimSpace(getenv(name)); v != "" {
			return v, nil
		}
		return "", fmt.Errorf("%s names %s, which is not set", key, name)
	}
	if apiKey, err = read("elicitation_service.api_key_env", s.APIKeyEnv); err != nil {
		return "", "", err
	}
	if s.Embedded != nil && s.Embedded.SignIn != nil {
		signInSecret, err = read("elicitation_service.embedded.sign_in.client_secret_env", s.Embedded.SignIn.ClientSecretEnv)
	}
	return apiKey, signInSecret, err
}

// logger is the proxy's logger on stderr, at --log-level, else
// $MCP_ELICITATION_PROXY_LOG_LEVEL, else info.
func logger(level string, getenv func(string) string, stderr io.Writer) (*slog.Logger, error) {
	if level == "" {
		level = getenv(envLogLevel)
	}
	var lv slog.Level
	if level != "" {
		if err := lv.UnmarshalText([]byte(level)); err != nil {
			return nil, fmt.Errorf("invalid log level %q", level)
		}
	}
	return slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: lv})), nil
}

// stateSealer is the request-state sealer of $MCP_ELICITATION_PROXY_STATE_KEY
// (a bare base64 key, or k1:NEW,k0:OLD to rotate: the one keyring parser);
// nil (a random key) when it is not set.
func stateSealer(getenv func(string) string) (*plan.Sealer, error) {
	k := getenv(envStateKey)
	if k == "" {
		return nil, nil
	}
	s, err := plan.ParseStateKey(k)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", envStateKey, err)
	}
	return s, nil
}

func describe(cfg *config.Config) string {
	if cfg.Upstream.URL != "" {
		return proxy.RedactURL(cfg.Upstream.URL)
	}
	return cfg.Upstream.Command
}

func buildVersion() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "devel"
}
