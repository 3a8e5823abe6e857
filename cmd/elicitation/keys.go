package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/apikey"
)

// keysUsage describes the administration commands.
const keysUsage = `usage: elicitation keys COMMAND [flags]

Commands:
  create    create a key for a principal and print it (it is shown only this once):
            keys create --principal NAME [--name NOTE] [--expires DURATION like 90d, 12h or 30m] [--json]
  revoke    revoke the key with that id (from create or list): keys revoke [--json] ID
  list      list every key (id, principal, name, created, expires, revoked): keys list [--json]

The store flags (--data-dir, --store, --table, --create-table) go after
the command or before it: "keys create --data-dir D" and "keys --data-dir
D create" are the same.
`

// keysCommand is one keys subcommand: its own flags bound to fs, then
// do, run with the store once the flags are parsed.
type keysCommand func(fs *flag.FlagSet, stdout io.Writer) func(ctx context.Context, store apikey.Store, args []string) error

var keysCommands = map[string]keysCommand{
	"create": keysCreate,
	"revoke": keysRevoke,
	"list":   keysList,
}

// runKeys administers the API keys of the MCP endpoint:
//
//	elicitation keys create --principal alice [store flags]
//	elicitation keys list [store flags]
//	elicitation keys revoke ID [store flags]
//
// Errors describe the operator's mistake or the store's failure.
func runKeys(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	var c Config
	fs := flag.NewFlagSet("elicitation keys", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, keysUsage+"\nstore flags:\n")
		fs.PrintDefaults()
	}
	if err := storeFlags(fs, &c, getenv); err != nil {
		return err
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return errors.New("keys: missing command (create, revoke or list)")
	}
	name := fs.Arg(0)
	if name == "help" {
		fs.Usage()
		return flag.ErrHelp
	}
	newCmd, ok := keysCommands[name]
	if !ok {
		return fmt.Errorf("keys: unknown command %q (want create, revoke or list)", name)
	}
	sub := flag.NewFlagSet("elicitation keys "+name, flag.ContinueOnError)
	sub.SetOutput(stderr)
	bindFlags(sub, &c, storeNames...)
	do := newCmd(sub, stdout)
	sub.Usage = func() {
		fmt.Fprint(stderr, keysUsage+"\nflags of keys "+name+":\n")
		sub.PrintDefaults()
	}
	if err := sub.Parse(fs.Args()[1:]); err != nil {
		return err
	}
	if c.Store != "dynamodb" {
		// The keys may come before the server's first start (the
		// data directory does not exist yet).
		if err := os.MkdirAll(c.DataDir, 0o700); err != nil {
			return fmt.Errorf("data directory: %w", err)
		}
	}
	store, err := openAPIKeys(ctx, c)
	if err != nil {
		return err
	}
	return do(ctx, store, sub.Args())
}

func keysCreate(fs *flag.FlagSet, stdout io.Writer) func(context.Context, apikey.Store, []string) error {
	principal := fs.String("principal", "", "the identity the key authenticates as (required)")
	name := fs.String("name", "", "a note for operators")
	expires := fs.String("expires", "", "lifetime, like 90d, 12h or 30m (default: never)")
	asJSON := fs.Bool("json", false, "print JSON")
	return func(ctx context.Context, store apikey.Store, args []string) error {
		if len(args) > 0 {
			return fmt.Errorf("keys create: unexpected argument %q", args[0])
		}
		ttl, err := parseLifetime(*expires)
		if err != nil {
			return fmt.Errorf("keys create: --expires: %w", err)
		}
		secret, k, err := apikey.Create(ctx, store, apikey.CreateOptions{Principal: *principal, Name: *name, TTL: ttl})
		if err != nil {
			return fmt.Errorf("keys create: %w", err)
		}
		if *asJSON {
			return json.NewEncoder(stdout).Encode(struct {
				Secret string `json:"key"`
				apikey.Key
			}{secret, k})
		}
		_, err = fmt.Fprintf(stdout, "API key for %s (id %s). It is shown only this once:\n\n  %s\n\nClients send it as: Authorization: Bearer <key>\n", k.Principal, k.ID, secret)
		return err
	}
}

func keysRevoke(fs *flag.FlagSet, stdout io.Writer) func(context.Context, apikey.Store, []string) error {
	asJSON := fs.Bool("json", false, "print JSON")
	return func(ctx context.Context, store apikey.Store, args []string) error {
		if len(args) != 1 {
			return errors.New("keys revoke: want exactly one key id")
		}
		k, err := store.Revoke(ctx, args[0], time.Now())
		if errors.Is(err, apikey.ErrNotFound) {
			return fmt.Errorf("keys revoke: no key with id %q (see keys list)", args[0])
		}
		if err != nil {
			return fmt.Errorf("keys revoke: %w", err)
		}
		if *asJSON {
			return json.NewEncoder(stdout).Encode(k)
		}
		_, err = fmt.Fprintf(stdout, "revoked %s (%s) at %s\n", k.ID, k.Principal, k.RevokedAt.Format(time.RFC3339))
		return err
	}
}

func keysList(fs *flag.FlagSet, stdout io.Writer) func(context.Context, apikey.Store, []string) error {
	asJSON := fs.Bool("json", false, "print JSON")
	return func(ctx context.Context, store apikey.Store, args []string) error {
		if len(args) > 0 {
			return fmt.Errorf("keys list: unexpected argument %q", args[0])
		}
		keys, err := store.List(ctx)
		if err != nil {
			return fmt.Errorf("keys list: %w", err)
		}
		if *asJSON {
			if keys == nil {
				keys = []apikey.Key{}
			}
			return json.NewEncoder(stdout).Encode(keys)
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tPRINCIPAL\tNAME\tCREATED\tEXPIRES\tREVOKED")
		for _, k := range keys {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", k.ID, k.Principal, orDash(k.Name), stamp(k.CreatedAt), stamp(k.ExpiresAt), stamp(k.RevokedAt))
		}
		return tw.Flush()
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

// parseLifetime parses a time.Duration, or a whole number of days ("90d").
func parseLifetime(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	if d, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(d)
		if err != nil || n <= 0 || n > 3650 {
			return 0, fmt.Errorf("%q: want 1d to 3650d", s)
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%q: want a positive duration like 90d, 12h or 30m", s)
	}
	return d, nil
}
