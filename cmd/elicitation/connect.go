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
// or redirect into a new file, and where it goes on stderr. For a
// connector (claude.ai, ChatGPT), which has no file, the URL to paste on
// stdout and the steps on stderr.
//
//	elicitation connect [--url URL] [--require-api-key] [--auth key|oauth] [--name NAME] HOST|all
func runConnect(args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	var c Config
	fs := flag.NewFlagSet("elicitation connect", flag.ContinueOnError)
	fs.SetOutput(stderr)
	if err := bind(fs, &c, getenv, "addr", "require-api-key", "public-url", "oauth", "oidc-issuer", "oidc-client-id"); err != nil {
		return err
	}
	endpoint := fs.String("url", "", "the MCP endpoint to connect to, such as a deployment's https://…/mcp (default: http://<--addr>/mcp, the local server; for claude-ai and chatgpt <--public-url>/mcp)")
	name := fs.String("name", "elicitation", "the server's name in the host's configuration")
	authFlag := fs.String("auth", "", "how the host authenticates: key (an API key in a static Authorization header, when the endpoint requires one) or oauth (no header: the host signs the person in, for a server with --oauth); default oauth where the settings turn --oauth on, else key, and oauth for claude-ai and chatgpt, which send no key")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: elicitation connect [flags] HOST\n\nHOST is one of %s, or all.\nThe configuration goes to stdout, and where to put it to stderr.\nclaude-ai and chatgpt have no configuration file: the URL to paste goes to stdout, the steps to stderr.\n\nflags:\n", strings.Join(hostconfig.Names(), ", "))
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return errors.New("connect takes one HOST")
	}
	auth, err := hostconfig.ParseAuth(*authFlag)
	if err != nil {
		return fmt.Errorf("--auth: %w", err)
	}
	host := fs.Arg(0)
	ep, err := connectEndpoint(fs, c, *endpoint, host)
	if err != nil {
		return err
	}
	if auth == "" && c.OAuthOn() {
		// A server with OAuth on: hosts that can sign in do.
		auth = hostconfig.AuthOAuth
		ep.NeedsKey = true
	}
	ep.Name, ep.Auth = *name, auth
	if host == "all" {
		connectAll(stdout, ep)
		return nil
	}
	snippets, err := hostconfig.Render(host, ep)
	if err != nil {
		return err
	}
	if snippets[0].Host.Connector {
		printConnector(stdout, stderr, snippets)
		return nil
	}
	printConfig(stdout, stderr, host, ep, snippets)
	return nil
}

// connectEndpoint is the endpoint a host connects to: --url, else the
// local server's (--addr), or for a connector the public one
// (--public-url); an https URL implies API keys unless
// --require-api-key says otherwise.
func connectEndpoint(fs *flag.FlagSet, c Config, endpoint, host string) (hostconfig.Endpoint, error) {
	ep := hostconfig.Endpoint{URL: endpoint, NeedsKey: c.RequireAPIKey}
	h, _ := hostconfig.Lookup(host)
	switch {
	case ep.URL == "" && h.Connector && c.PublicURL != "":
		ep.URL = strings.TrimSuffix(c.PublicURL, "/") + "/mcp"
	case ep.URL == "":
		ep.URL = dialable("http://" + c.Addr + "/mcp")
	case !strings.HasPrefix(ep.URL, "http://") && !strings.HasPrefix(ep.URL, "https://"):
		return ep, fmt.Errorf("--url %q: an http:// or https:// URL of the MCP endpoint", ep.URL)
	}
	explicit := false
	fs.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "require-api-key" })
	if !explicit && strings.HasPrefix(ep.URL, "https://") {
		// A deployment on AWS always requires API keys.
		ep.NeedsKey = true
	}
	return ep, nil
}

// connectAll prints every host's configuration, and the connectors'
// steps where the URL is one they can reach (https).
func connectAll(stdout io.Writer, ep hostconfig.Endpoint) {
	for _, h := range append(hostconfig.Hosts(), hostconfig.Connectors()...) {
		snippets, _ := hostconfig.Render(h.Name, ep)
		for _, s := range snippets {
			fmt.Fprintf(stdout, "# %s: %s\n%s\n\n", h.Title, s.Where, s.Text)
		}
	}
}

// printConfig: the file's snippet on stdout ("connect claude-code >
// .mcp.json"), everything else on stderr.
func printConfig(stdout, stderr io.Writer, host string, ep hostconfig.Endpoint, snippets []hostconfig.Snippet) {
	first := snippets[0]
	fmt.Fprintf(stderr, "# %s: %s\n", first.Host.Title, first.Where)
	fmt.Fprintln(stdout, first.Text)
	for _, s := range snippets[1:] {
		fmt.Fprintf(stderr, "\n# or, %s:\n%s\n", s.Where, s.Text)
	}
	if signIn := hostconfig.SignIn(host, ep); signIn != "" {
		fmt.Fprintf(stderr, "\n# OAuth: no API key in the configuration; the server must run OAuth (--oauth with --oidc-issuer). To sign in, %s; then sign in at the server's identity provider (--oidc-issuer), and approve on its consent page. API keys keep working for machine agents.\n", signIn)
		return
	}
	if !ep.NeedsKey {
		return
	}
	where := first.Host.Title + ": " + hostconfig.KeyHint(host)
	if hostconfig.ReadsKey(snippets) {
		where = first.Host.Title + " reads it from $" + hostconfig.KeyVariable + " (set it where the host starts)"
	}
	fmt.Fprintf(stderr, "\n# The endpoint requires an API key (%s keys create --principal NAME, with the server's store flags if it has any: --data-dir D, or --store dynamodb --table T, as its banner prints them; or make api-key-create on AWS). %s.\n", invocation(os.Args[0]), where)
}

// printConnector: the URL on stdout, the steps to paste it on stderr.
func printConnector(stdout, stderr io.Writer, snippets []hostconfig.Snippet) {
	first := snippets[0]
	fmt.Fprintln(stdout, first.Text)
	fmt.Fprintf(stderr, "# %s has no configuration file: paste the URL above as the %s of a connector.\n", first.Host.Title, first.Where)
	for _, s := range snippets[1:] {
		fmt.Fprintf(stderr, "%s\n", s.Text)
	}
}
