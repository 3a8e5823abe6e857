package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/boltstore"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// runAudit prints a request's audit trail as JSON: the operator's view,
// whoever owns the request.
func runAudit(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	if len(args) > 0 && args[0] == "verify" { // never an id: ids are 22 characters
		return runAuditVerify(ctx, args[1:], stdout, stderr, getenv)
	}
	var c Config
	fs := flag.NewFlagSet("elicitation audit", flag.ContinueOnError)
	fs.SetOutput(stderr)
	if err := storeFlags(fs, &c, getenv); err != nil {
		return err
	}
	args, id := trailingOperand(fs, args)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if id == "" && fs.NArg() == 1 {
		id = fs.Arg(0)
	}
	if id == "" || fs.NArg() > 1 || (fs.NArg() == 1 && fs.Arg(0) != id) {
		return fmt.Errorf("usage: elicitation audit [flags] [--] ELICITATION_ID")
	}
	store, closeStore, err := openForOperator(ctx, c)
	if err != nil {
		return err
	}
	defer closeStore()
	st, err := store.State(ctx, id)
	if err != nil {
		return fmt.Errorf("audit %s: %w", id, err)
	}
	// Expiry is derived on every read (SPEC §2): a request still pending
	// past its expiresAt is expired, whatever the store holds.
	st.Status = st.StatusAt(time.Now())
	tr, err := store.Audit(ctx, id)
	if err != nil {
		return fmt.Errorf("audit %s: %w", id, err)
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(struct {
		State elicitation.State      `json:"state"`
		Audit elicitation.AuditTrail `json:"audit"`
	}{st, tr})
}

// trailingOperand takes the last argument as the command's operand when it
// starts with "-" but names no flag of fs: an elicitation id may start with
// "-" (ids are base64url), and the flag package would read it as an unknown
// flag. Ids are 22 random characters, never a flag's name; "--" before the
// id works too.
func trailingOperand(fs *flag.FlagSet, args []string) (rest []string, operand string) {
	n := len(args)
	if n == 0 || len(args[n-1]) < 2 || args[n-1][0] != '-' || args[n-1] == "--" {
		return args, ""
	}
	if n >= 2 && args[n-2] == "--" {
		return args, ""
	}
	name := strings.TrimLeft(args[n-1], "-")
	if i := strings.IndexByte(name, '='); i >= 0 {
		name = name[:i]
	}
	if name == "h" || name == "help" || fs.Lookup(name) != nil {
		return args, ""
	}
	if n >= 2 && isValueFlag(fs, args[n-2]) {
		return args, ""
	}
	return args[:n-1], args[n-1]
}

// splitOperands separates args into fs's flags (with the values of those
// that take the next argument) and the operands, wherever they stand: an
// elicitation id may start with "-" (ids are base64url) and is an
// operand unless it names a flag of fs; everything after "--" is too.
// It is trailingOperand for commands that take several ids.
func splitOperands(fs *flag.FlagSet, args []string) (flags, operands []string) {
	for i := 0; i < len(args); i++ {
		arg := args[i]
		name := strings.TrimLeft(arg, "-")
		if j := strings.IndexByte(name, '='); j >= 0 {
			name = name[:j]
		}
		switch {
		case arg == "--":
			return flags, append(operands, args[i+1:]...)
		case len(arg) < 2 || arg[0] != '-' || !(name == "h" || name == "help" || fs.Lookup(name) != nil):
			operands = append(operands, arg)
		case isValueFlag(fs, arg) && i+1 < len(args):
			flags = append(flags, arg, args[i+1])
			i++
		default:
			flags = append(flags, arg)
		}
	}
	return flags, operands
}

// isValueFlag reports whether arg is a flag of fs that takes its value as
// the next argument ("--data-dir" before "DIR", not "--data-dir=DIR", and
// not a boolean flag).
func isValueFlag(fs *flag.FlagSet, arg string) bool {
	if len(arg) < 2 || arg[0] != '-' || strings.Contains(arg, "=") {
		return false
	}
	f := fs.Lookup(strings.TrimLeft(arg, "-"))
	if f == nil {
		return false
	}
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return !ok || !b.IsBoolFlag()
}

// runCleanup removes requests past their retention.
func runCleanup(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	var c Config
	fs := flag.NewFlagSet("elicitation cleanup", flag.ContinueOnError)
	fs.SetOutput(stderr)
	if err := storeFlags(fs, &c, getenv); err != nil {
		return err
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	store, closeStore, err := openForOperator(ctx, c)
	if err != nil {
		return err
	}
	defer closeStore()
	n, err := store.Cleanup(ctx, time.Now())
	if err != nil {
		return fmt.Errorf("cleanup: %w", err)
	}
	_, err = fmt.Fprintf(stdout, "removed %d requests past their retention\n", n)
	return err
}

// runCompact rewrites the embedded store's file to hold only what is live
// (cleanup frees pages for reuse, but bbolt never shrinks its file).
func runCompact(_ context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	path, err := embeddedFile("compact", args, stderr, getenv, "DynamoDB needs no compaction")
	if err != nil {
		return err
	}
	before, after, err := boltstore.Compact(path)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "compacted %s: %s -> %s\n", path, size(before), size(after))
	return err
}

// runCheck runs the full consistency check of the embedded store's file:
// every page, which the server's start-up no longer reads (it checks the
// header, the size and the pages every call depends on, in constant time).
func runCheck(_ context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	path, err := embeddedFile("check", args, stderr, getenv, "DynamoDB keeps its own integrity")
	if err != nil {
		return err
	}
	if err := boltstore.Check(path); err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "checked %s: every page is sound\n", path)
	return err
}

// embeddedFile reads the flags of an operator command that works on the
// embedded store's file (--data-dir, --store; no arguments) and returns
// the file's path; on DynamoDB it refuses, saying why (notOnDynamo).
func embeddedFile(command string, args []string, stderr io.Writer, getenv func(string) string, notOnDynamo string) (string, error) {
	var c Config
	fs := flag.NewFlagSet("elicitation "+command, flag.ContinueOnError)
	fs.SetOutput(stderr)
	if err := bind(fs, &c, getenv, "data-dir", "store"); err != nil {
		return "", err
	}
	if err := fs.Parse(args); err != nil {
		return "", err
	}
	if fs.NArg() > 0 {
		return "", fmt.Errorf("%s takes no arguments, got %q", command, strings.Join(fs.Args(), " "))
	}
	if c.Store == "dynamodb" {
		return "", fmt.Errorf("%s applies to the embedded store; %s", command, notOnDynamo)
	}
	return filepath.Join(c.DataDir, "elicitation.db"), nil
}

func size(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

func openForOperator(ctx context.Context, c Config) (elicitation.Store, func(), error) {
	store, err := openStore(ctx, c)
	if err != nil {
		return nil, nil, err
	}
	return store, func() {
		if cl, ok := store.(io.Closer); ok {
			_ = cl.Close()
		}
	}, nil
}
