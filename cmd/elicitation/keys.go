package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/mcp-elicitation/elicitation/internal/apikey"
	"github.com/mcp-elicitation/elicitation/internal/compose/localstore"
)

// runKeys administers the API keys of the MCP endpoint:
//
//	elicitation keys [store flags] create --principal alice
//	elicitation keys [store flags] list
//	elicitation keys [store flags] revoke ID
func runKeys(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	var c Config
	fs := flag.NewFlagSet("elicitation keys", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, "usage: elicitation keys [store flags] create|revoke|list …\n\nstore flags:\n")
		fs.PrintDefaults()
		fmt.Fprint(stderr, "\n"+apikey.AdminUsage)
	}
	if err := storeFlags(fs, &c, getenv); err != nil {
		return err
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	store, err := localstore.APIKeys(ctx, c)
	if err != nil {
		return err
	}
	return apikey.RunAdmin(ctx, fs.Args(), stdout, store)
}
