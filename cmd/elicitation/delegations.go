package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// runDelegations lists the reviewers' delegations (out of office, made in
// the inbox) as JSON: those that have not ended, or with --all every one
// the store keeps (ended ones for elicitation.DelegationRetention). It
// reads the store directly, as the other operator commands do.
func runDelegations(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	var c Config
	fs := flag.NewFlagSet("elicitation delegations", flag.ContinueOnError)
	fs.SetOutput(stderr)
	if err := storeFlags(fs, &c, getenv); err != nil {
		return err
	}
	all := fs.Bool("all", false, "also list the delegations that have ended (kept 30 days after their end)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("delegations takes no arguments, got %q", strings.Join(fs.Args(), " "))
	}
	store, closeStore, err := openForOperator(ctx, c)
	if err != nil {
		return err
	}
	defer closeStore()
	now := time.Now()
	after := now
	if *all {
		after = time.Time{}
	}
	ds, err := store.ListDelegations(ctx, after)
	if err != nil {
		return fmt.Errorf("delegations: %w", err)
	}
	type row struct {
		elicitation.Delegation
		Active bool `json:"active"` // the delegate may decide for the delegator now
	}
	out := struct {
		Delegations []row `json:"delegations"`
	}{Delegations: []row{}}
	for _, d := range ds {
		out.Delegations = append(out.Delegations, row{d, d.ActiveAt(now)})
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
