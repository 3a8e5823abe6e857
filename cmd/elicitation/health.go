package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// errUnhealthy: the server did not answer ok; the command exits 1, which a
// container's health check reads as unhealthy (2 is reserved there).
var errUnhealthy = errors.New("unhealthy")

// runHealth asks the server listening on --addr (ELICITATION_ADDR) for GET
// /healthz and prints "ok" when it answers 200. The container image's
// health check runs it: the image holds no curl.
func runHealth(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	var c Config
	fs := flag.NewFlagSet("elicitation health", flag.ContinueOnError)
	fs.SetOutput(stderr)
	if err := bind(fs, &c, getenv, "addr"); err != nil {
		return err
	}
	timeout := fs.Duration("timeout", 5*time.Second, "how long to wait for the answer")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("health takes no arguments, got %q", strings.Join(fs.Args(), " "))
	}
	url := dialable("http://"+c.Addr) + "/healthz"
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("--addr %q: %w", c.Addr, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("%w: %w", errUnhealthy, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%w: GET %s answered %s", errUnhealthy, url, resp.Status)
	}
	_, err = fmt.Fprintln(stdout, "ok")
	return err
}
