package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/mcp-elicitation/elicitation/internal/hostconfig"
)

// runConnect prints the configuration that connects one MCP host to this
// server (or a deployed endpoint): the snippet on stdout, ready to paste
// or redirect into a new file, and where it goes on stderr.
//
//	elicitation connect [--url URL] [--require-api-key] [--name NAME] HOST|all
func runConnect(args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	var c Config
	fs := flag.NewFlagSet("elicitation connect", flag.ContinueOnError)
	fs.SetOutput(stderr)
	if err := bind(fs, &c, getenv, "addr", "require-api-key"); err != nil {
		return err
	}
	endpoint := fs.String("url", "", "the MCP endpoint to connect to, such as a deployment's https://…/mcp (default: http://<--addr>/mcp, the local server)")
	name := fs.String("name", "elicitation", "the server's name in the host's configuration")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: elicitation connect [flags] HOST\n\nHOST is one of %s, or all.\nThe configuration goes to stdout, and where to put it to stderr.\n\nflags:\n", strings.Join(hostconfig.Names(), ", "))
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return errors.New("connect takes one HOST")
	}
	ep := hostconfig.Endpoint{URL: *endpoint, NeedsKey: c.RequireAPIKey, Name: *name}
	if ep.URL == "" {
		ep.URL = dialable("http://" + c.Addr + "/mcp")
	} else if !strings.HasPrefix(ep.URL, "http://") && !strings.HasPrefix(ep.URL, "https://") {
		return fmt.Errorf("--url %q: an http:// or https:// URL of the MCP endpoint", ep.URL)
	}
	explicit := false
	fs.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "require-api-key" })
	if !explicit && strings.HasPrefix(ep.URL, "https://") {
		// A deployment on AWS always requires API keys.
		ep.NeedsKey = true
	}
	host := fs.Arg(0)
	if host == "all" {
		for _, h := range hostconfig.Hosts() {
			snippets, _ := hostconfig.Render(h.Name, ep)
			for _, s := range snippets {
				fmt.Fprintf(stdout, "# %s: %s\n%s\n\n", h.Title, s.Where, s.Text)
			}
		}
		return nil
	}
	snippets, err := hostconfig.Render(host, ep)
	if err != nil {
		return err
	}
	// The file's snippet on stdout ("connect claude-code > .mcp.json"),
	// everything else on stderr.
	first := snippets[0]
	fmt.Fprintf(stderr, "# %s: %s\n", first.Host.Title, first.Where)
	fmt.Fprintln(stdout, first.Text)
	where := first.Host.Title + ": " + hostconfig.KeyHint(host)
	if hostconfig.ReadsKey(snippets) {
		where = first.Host.Title + " reads it from $" + hostconfig.KeyVariable + " (set it where the host starts)"
	}
	for _, s := range snippets[1:] {
		fmt.Fprintf(stderr, "\n# or, %s:\n%s\n", s.Where, s.Text)
	}
	if ep.NeedsKey {
		fmt.Fprintf(stderr, "\n# The endpoint requires an API key (%s keys create --principal NAME, with the server's store flags if it has any: --data-dir D, or --store dynamodb --table T, as its banner prints them; or make api-key-create on AWS). %s.\n", invocation(os.Args[0]), where)
	}
	return nil
}
