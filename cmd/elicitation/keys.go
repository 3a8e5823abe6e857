package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"path/filepath"

	"github.com/mcp-elicitation/elicitation/internal/apikey"
	"github.com/mcp-elicitation/elicitation/internal/apikey/dynamokeys"
	"github.com/mcp-elicitation/elicitation/internal/dynamostore"
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
	storeFlags(fs, &c, getenv)
	if err := fs.Parse(args); err != nil {
		return err
	}
	store, err := keyStore(ctx, c)
	if err != nil {
		return err
	}
	return apikey.RunAdmin(ctx, fs.Args(), stdout, store)
}

// keyStore opens where API keys are kept: a file in the data directory
// beside the embedded store, or the DynamoDB table.
func keyStore(ctx context.Context, c Config) (apikey.Store, error) {
	if c.Store == "dynamodb" {
		client, err := dynamostore.NewClient(ctx)
		if err != nil {
			return nil, err
		}
		return dynamokeys.New(client, c.Table), nil
	}
	return apikey.NewFileStore(filepath.Join(c.DataDir, "api-keys.json")), nil
}
