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
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/proxy"
	"github.com/mcp-elicitation/elicitation/internal/proxy/config"
	"github.com/mcp-elicitation/elicitation/internal/proxy/gate"
	"github.com/mcp-elicitation/elicitation/internal/proxy/requeststate"
	"github.com/mcp-elicitation/elicitation/internal/proxy/upstream"
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
// (in stdio mode the MCP transport owns the process's real stdout).
func run(args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("mcp-elicitation-proxy", flag.ContinueOnError)
	fs.SetOutput(stderr)
	for _, a := range args {
		if a == "-h" || a == "-help" || a == "--help" {
			fs.SetOutput(stdout)
		}
	}
	configPath := fs.String("config", "", "path to the YAML configuration (default $"+envConfig+")")
	httpAddr := fs.String("http", "", "serve MCP over streamable HTTP on this address (host:port) instead of stdio")
	showVersion := fs.Bool("version", false, "print the version and exit")
	strictConfig := fs.Bool("strict-config", false, "refuse unknown configuration keys and ignored values instead of warning about them")
	logLevel := fs.String("log-level", "", "log level: debug, info, warn or error (default $"+envLogLevel+" or info)")
	fs.Usage = func() {
		out := fs.Output()
		fmt.Fprintf(out, `mcp-elicitation-proxy: a transparent MCP proxy that elicits missing required
tool arguments and never elicits secrets.

Usage:
  mcp-elicitation-proxy --config config.yaml [--http host:port] [--strict-config]

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
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "mcp-elicitation-proxy: unexpected argument %q\n", fs.Arg(0))
		fs.Usage()
		return 2
	}
	if *showVersion {
		fmt.Fprintln(stdout, "mcp-elicitation-proxy", buildVersion())
		return 0
	}

	level := *logLevel
	if level == "" {
		level = getenv(envLogLevel)
	}
	var lv slog.Level
	if level != "" {
		if err := lv.UnmarshalText([]byte(level)); err != nil {
			fmt.Fprintf(stderr, "mcp-elicitation-proxy: invalid log level %q\n", level)
			return 2
		}
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: lv}))

	path := *configPath
	if path == "" {
		path = getenv(envConfig)
	}
	if path == "" {
		fmt.Fprintf(stderr, "mcp-elicitation-proxy: no configuration: pass --config config.yaml or set %s\n", envConfig)
		return 2
	}
	cfg, err := config.LoadWith(path, config.Options{Strict: *strictConfig})
	if err != nil {
		fmt.Fprintf(stderr, "mcp-elicitation-proxy: %v\n", err)
		return 2
	}
	for _, w := range cfg.Warnings {
		logger.Warn("configuration: " + w.Error())
	}
	var sealer *requeststate.Sealer
	if k := getenv(envStateKey); k != "" {
		var err error
		if sealer, err = requeststate.Parse(k); err != nil {
			fmt.Fprintf(stderr, "mcp-elicitation-proxy: %s: %v\n", envStateKey, err)
			return 2
		}
	}

	apiKey, signInSecret, err := serviceSecrets(cfg, getenv)
	if err != nil {
		fmt.Fprintf(stderr, "mcp-elicitation-proxy: %s: %v\n", path, err)
		return 2
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()

	startCtx, cancel := context.WithTimeout(ctx, 60*time.Second)
	p, err := proxy.New(startCtx, proxy.Options{
		Config:         cfg,
		Version:        buildVersion(),
		Logger:         logger,
		Sealer:         sealer,
		UpstreamStderr: stderr,
	})
	cancel()
	if err != nil {
		logger.Error("starting the proxy failed", "error", err)
		return 1
	}
	defer func() {
		if err := p.Close(); err != nil {
			logger.Error("closing the upstream failed", "error", err)
		}
	}()
	// The human gate (docs/gate.md), when the configuration sets its keys.
	g, gateCloser, err := gate.Open(ctx, cfg, gate.OpenOptions{APIKey: apiKey, SignInSecret: signInSecret, Logger: logger, Version: buildVersion(), Upstream: p.CallUpstream, Sealer: sealer})
	if err != nil {
		logger.Error("starting the human gate failed", "error", err)
		return 1
	}
	defer gateCloser.Close()
	if g != nil {
		g.Install(p.Planner())
	}

	if *httpAddr != "" {
		return serveHTTP(ctx, p, *httpAddr, logger)
	}
	logger.Info("serving MCP on stdio", "upstream", describe(cfg))
	if err := p.Server().Run(ctx, p.WrapTransport(stdioTransport())); err != nil && ctx.Err() == nil && !errors.Is(err, io.EOF) {
		logger.Error("stdio session ended with an error", "error", err)
		return 1
	}
	return 0
}

func serveHTTP(ctx context.Context, p *proxy.Proxy, addr string, logger *slog.Logger) int {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		logger.Error("listening failed", "address", addr, "error", err)
		return 1
	}
	srv := &http.Server{Handler: p.HTTPHandler(), ReadHeaderTimeout: 10 * time.Second}
	logger.Info("serving MCP over streamable HTTP", "address", "http://"+ln.Addr().String())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		logger.Error("HTTP server failed", "error", err)
		return 1
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(shutdownCtx)
	return 0
}

func describe(cfg *config.Config) string {
	if cfg.Upstream.URL != "" {
		return upstream.RedactURL(cfg.Upstream.URL)
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
