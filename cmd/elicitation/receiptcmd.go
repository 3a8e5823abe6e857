package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/signing"
	"github.com/mcp-elicitation/elicitation/receipt"
)

// runReceipt checks an approval receipt as a third party would
// (receipt.Verify): against the key set the deployment --issuer
// publishes (or --keys), and the elicitation, outcome, tool and arguments
// it must be for. It prints the claims, or says why it refuses the
// receipt.
func runReceipt(ctx context.Context, args []string, stdout, stderr io.Writer, _ func(string) string) error {
	fs := flag.NewFlagSet("elicitation receipt", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var e receipt.Expect
	fs.StringVar(&e.Issuer, "issuer", "", "the deployment's public URL, the receipt's iss (required)")
	keys := fs.String("keys", "", "the key set's URL (default: the issuer's "+signing.JWKSPath+")")
	fs.StringVar(&e.Txn, "elicitation", "", "the elicitationId the receipt must be for")
	fs.StringVar(&e.Outcome, "outcome", "", "the outcome it must attest: approved or declined")
	fs.StringVar(&e.Tool, "tool", "", "the upstream tool it must approve")
	arguments := fs.String("arguments", "", "the call's arguments (JSON) whose digest it must carry")
	timeout := fs.Duration("timeout", 10*time.Second, "how long to wait for the key set")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if e.Issuer == "" || fs.NArg() != 1 {
		return errors.New("usage: elicitation receipt --issuer URL [flags] RECEIPT")
	}
	if *arguments != "" {
		e.Arguments = json.RawMessage(*arguments)
	}
	if *keys == "" {
		*keys = strings.TrimRight(e.Issuer, "/") + signing.JWKSPath
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	set, err := receipt.FetchKeys(ctx, nil, *keys)
	if err != nil {
		return err
	}
	c, err := receipt.Verify(strings.TrimSpace(fs.Arg(0)), set, e)
	if err != nil {
		return fmt.Errorf("receipt refused: %w", err)
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(c)
}
