package apikey

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// AdminUsage describes the administration commands.
const AdminUsage = `usage:
  keys create --principal NAME [--name NOTE] [--expires DURATION] [--json]
      create a key for NAME and print it (it is shown only this once);
      DURATION is like 90d, 12h or 30m
  keys revoke ID
      revoke the key with that id (from create or list)
  keys list [--json]
      list every key: id, principal, name, created, expires, revoked
`

// RunAdmin runs one administration command, args being what follows
// "keys" ("create --principal alice", "revoke 0123abcd...", "list"), with
// its output on stdout. Errors describe the operator's mistake or the
// store's failure; flag.ErrHelp is returned after printing usage for -h.
func RunAdmin(ctx context.Context, args []string, stdout io.Writer, store Store) error {
	if len(args) == 0 {
		fmt.Fprint(stdout, AdminUsage)
		return errors.New("keys: missing command (create, revoke or list)")
	}
	cmd, args := args[0], args[1:]
	fs := flag.NewFlagSet("keys "+cmd, flag.ContinueOnError)
	fs.SetOutput(stdout)
	fs.Usage = func() {
		fmt.Fprint(stdout, AdminUsage)
		fmt.Fprintf(stdout, "\nflags of keys %s:\n", cmd)
		fs.PrintDefaults()
	}
	asJSON := fs.Bool("json", false, "print JSON")
	switch cmd {
	case "create":
		principal := fs.String("principal", "", "the identity the key authenticates as (required)")
		name := fs.String("name", "", "a note for operators")
		expires := fs.String("expires", "", "lifetime, like 90d, 12h or 30m (default: never)")
		if err := fs.Parse(args); err != nil {
			return err
		}
		if fs.NArg() > 0 {
			return fmt.Errorf("keys create: unexpected argument %q", fs.Arg(0))
		}
		ttl, err := parseLifetime(*expires)
		if err != nil {
			return fmt.Errorf("keys create: --expires: %w", err)
		}
		secret, k, err := Create(ctx, store, CreateOptions{Principal: *principal, Name: *name, TTL: ttl})
		if err != nil {
			return fmt.Errorf("keys create: %w", err)
		}
		if *asJSON {
			return json.NewEncoder(stdout).Encode(struct {
				Secret string `json:"key"`
				Key
			}{secret, k})
		}
		fmt.Fprintf(stdout, "API key for %s (id %s). It is shown only this once:\n\n  %s\n\nClients send it as: Authorization: Bearer <key>\n", k.Principal, k.ID, secret)
		return nil
	case "revoke":
		if err := fs.Parse(args); err != nil {
			return err
		}
		if fs.NArg() != 1 {
			return errors.New("keys revoke: want exactly one key id")
		}
		k, err := store.Revoke(ctx, fs.Arg(0), time.Now())
		if errors.Is(err, ErrNotFound) {
			return fmt.Errorf("keys revoke: no key with id %q (see keys list)", fs.Arg(0))
		}
		if err != nil {
			return fmt.Errorf("keys revoke: %w", err)
		}
		if *asJSON {
			return json.NewEncoder(stdout).Encode(k)
		}
		fmt.Fprintf(stdout, "revoked %s (%s) at %s\n", k.ID, k.Principal, k.RevokedAt.Format(time.RFC3339))
		return nil
	case "list":
		if err := fs.Parse(args); err != nil {
			return err
		}
		if fs.NArg() > 0 {
			return fmt.Errorf("keys list: unexpected argument %q", fs.Arg(0))
		}
		keys, err := store.List(ctx)
		if err != nil {
			return fmt.Errorf("keys list: %w", err)
		}
		if *asJSON {
			if keys == nil {
				keys = []Key{}
			}
			return json.NewEncoder(stdout).Encode(keys)
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tPRINCIPAL\tNAME\tCREATED\tEXPIRES\tREVOKED")
		for _, k := range keys {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", k.ID, k.Principal, orDash(k.Name), stamp(k.CreatedAt), stamp(k.ExpiresAt), stamp(k.RevokedAt))
		}
		return tw.Flush()
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, AdminUsage)
		return flag.ErrHelp
	}
	return fmt.Errorf("keys: unknown command %q (want create, revoke or list)", cmd)
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
