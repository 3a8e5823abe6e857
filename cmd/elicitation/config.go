package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// Config is everything the local server needs, from flags and environment.
type Config struct {
	Addr         string        // MCP endpoint (and review routes unless ReviewAddr)
	ReviewAddr   string        // optional second listener for the review routes
	PublicURL    string        // base of review URLs
	DataDir      string        // embedded store, token secret
	Store        string        // "bolt" or "dynamodb"
	Table        string        // DynamoDB table
	CreateTable  bool          // create the DynamoDB table if missing
	MaxWait      time.Duration // bound of one elicit_await
	Retention    time.Duration // kept after expiresAt
	TokenKeys    string        // "kid:base64secret,…"; empty: generated and kept in DataDir
	Stateless    bool          // serve MCP statelessly, as on Lambda
	RequireKeys  bool          // require a bearer API key on /mcp
	CleanupEvery time.Duration // how often to remove requests past retention; 0: never
	LogLevel     string
}

func defaultDataDir(getenv func(string) string) string {
	if d := getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "mcp-elicitation")
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".local", "share", "mcp-elicitation")
	}
	return ".mcp-elicitation"
}

// storeFlags are the flags every command that opens the store shares.
func storeFlags(fs *flag.FlagSet, c *Config, getenv func(string) string) {
	env := func(name, def string) string {
		if v := getenv(name); v != "" {
			return v
		}
		return def
	}
	fs.StringVar(&c.DataDir, "data-dir", env("ELICITATION_DATA_DIR", defaultDataDir(getenv)), "directory of the embedded store and the page-token secret ($ELICITATION_DATA_DIR)")
	fs.StringVar(&c.Store, "store", env("ELICITATION_STORE", "bolt"), `"bolt" (embedded, in --data-dir) or "dynamodb" (AWS environment variables; AWS_ENDPOINT_URL_DYNAMODB for DynamoDB Local) ($ELICITATION_STORE)`)
	fs.StringVar(&c.Table, "table", env("ELICITATION_TABLE", "elicitation"), "DynamoDB table, with --store dynamodb ($ELICITATION_TABLE)")
	fs.BoolVar(&c.CreateTable, "create-table", false, "create the DynamoDB table if it does not exist")
}

func parseServe(args []string, stderr io.Writer, getenv func(string) string) (Config, error) {
	var c Config
	fs := flag.NewFlagSet("elicitation serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	env := func(name, def string) string {
		if v := getenv(name); v != "" {
			return v
		}
		return def
	}
	fs.StringVar(&c.Addr, "addr", env("ELICITATION_ADDR", "127.0.0.1:8080"), "address of the MCP endpoint /mcp, and of the review page unless --review-addr ($ELICITATION_ADDR)")
	fs.StringVar(&c.ReviewAddr, "review-addr", env("ELICITATION_REVIEW_ADDR", ""), "serve the review page on this second address instead (for example the LAN address, so a phone can reach it while /mcp stays on loopback) ($ELICITATION_REVIEW_ADDR)")
	fs.StringVar(&c.PublicURL, "public-url", env("ELICITATION_PUBLIC_URL", ""), "base URL reviewers open (a LAN address or a tunnel); default: http://<review address> ($ELICITATION_PUBLIC_URL)")
	storeFlags(fs, &c, getenv)
	fs.DurationVar(&c.MaxWait, "max-wait", envDuration(getenv, "ELICITATION_MAX_WAIT", elicitation.DefaultMaxWait), "longest single elicit_await; waitSeconds can only shorten it ($ELICITATION_MAX_WAIT)")
	fs.DurationVar(&c.Retention, "retention", envDuration(getenv, "ELICITATION_RETENTION", elicitation.DefaultRetention), "how long a request is kept after it expires ($ELICITATION_RETENTION)")
	fs.StringVar(&c.TokenKeys, "token-keys", env("ELICITATION_TOKEN_KEYS", ""), `page-token signing keys "kid:base64secret[,kid:base64secret…]", the first signs; default: a random key kept in --data-dir ($ELICITATION_TOKEN_KEYS)`)
	// A value that is not a boolean is refused below rather than read as
	// false, which would leave /mcp open without API keys.
	requireKeys, requireKeysErr := strconv.ParseBool(env("ELICITATION_REQUIRE_API_KEY", "false"))
	fs.BoolVar(&c.RequireKeys, "require-api-key", requireKeys, "require a bearer API key on /mcp (create keys with \"elicitation keys create\"); each key's principal owns what it creates ($ELICITATION_REQUIRE_API_KEY=true)")
	fs.DurationVar(&c.CleanupEvery, "cleanup-interval", envDuration(getenv, "ELICITATION_CLEANUP_INTERVAL", time.Hour), "how often to remove requests past their retention (0 disables; \"elicitation cleanup\" does it once) ($ELICITATION_CLEANUP_INTERVAL)")
	fs.BoolVar(&c.Stateless, "stateless", false, "serve MCP statelessly with JSON responses, as the Lambda function does")
	fs.StringVar(&c.LogLevel, "log-level", env("ELICITATION_LOG_LEVEL", "info"), "debug, info, warn or error ($ELICITATION_LOG_LEVEL)")
	for _, name := range []string{"ELICITATION_MAX_WAIT", "ELICITATION_RETENTION", "ELICITATION_CLEANUP_INTERVAL"} {
		if v := getenv(name); v != "" {
			if _, err := time.ParseDuration(v); err != nil {
				return Config{}, fmt.Errorf("$%s=%q is not a duration like 20s or 168h", name, v)
			}
		}
	}
	if requireKeysErr != nil {
		return Config{}, fmt.Errorf("$ELICITATION_REQUIRE_API_KEY=%q is not true or false", getenv("ELICITATION_REQUIRE_API_KEY"))
	}
	if err := fs.Parse(args); err != nil {
		return Config{}, err
	}
	if fs.NArg() > 0 {
		return Config{}, fmt.Errorf("serve takes no arguments, got %q", strings.Join(fs.Args(), " "))
	}
	if c.MaxWait < time.Second || c.MaxWait > 10*time.Minute {
		return Config{}, fmt.Errorf("--max-wait %v: must be between 1s and 10m", c.MaxWait)
	}
	if c.CleanupEvery < 0 {
		return Config{}, fmt.Errorf("--cleanup-interval %v: must not be negative", c.CleanupEvery)
	}
	if c.Retention <= 0 {
		// The service reads zero as its default, 7 days.
		return Config{}, fmt.Errorf("--retention %v: must be positive", c.Retention)
	}
	if c.Store != "bolt" && c.Store != "dynamodb" {
		return Config{}, fmt.Errorf(`--store %q: must be "bolt" or "dynamodb"`, c.Store)
	}
	return c, nil
}

func envDuration(getenv func(string) string, name string, def time.Duration) time.Duration {
	if v := getenv(name); v != "" {
		if d, err := time.ParseDuration(v); err == nil {
			return d
		}
	}
	return def
}
