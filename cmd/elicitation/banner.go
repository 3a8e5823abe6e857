package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcp-elicitation/elicitation/internal/compose"
	"github.com/mcp-elicitation/elicitation/internal/hostconfig"
)

// PrintWelcome tells the user how to connect an MCP host: ready-to-paste
// configuration for the common hosts (with the Authorization header when
// API keys are required) and who may do what on this endpoint. Its
// pointers (connect, keys create) are commands that work as printed: the
// program as it was started, this server's URL, key setting and store.
func (m *Main) PrintWelcome(w io.Writer) {
	keys, oauth := m.Config.MCPAuth()
	ep := hostconfig.Endpoint{URL: dialable(m.MCPURL), NeedsKey: keys || oauth}
	if oauth {
		ep.Auth = hostconfig.AuthOAuth
	}
	prog := invocation(os.Args[0])
	fmt.Fprintf(w, "\nelicitation %s is running (store: %s)\n\n", version, m.storeName())
	fmt.Fprintf(w, "  MCP endpoint (streamable HTTP):  %s\n", m.MCPURL)
	fmt.Fprintf(w, "  Review pages:                    %s/review/…\n\n", m.ReviewBase)
	switch {
	case oauth:
		fmt.Fprintf(w, `OAuth on: a host connects with the URL alone. The person signs in with %s
and allows the host on the consent page; each person sees only their own requests.
`, m.Config.OIDCIssuer)
		if keys {
			fmt.Fprintf(w, "API keys work beside it, for machine agents: %s keys create %s--principal NAME\n", prog, m.storeArgs())
		}
		fmt.Fprintln(w)
	case keys:
		fmt.Fprintf(w, `API keys are required: every MCP request must carry "Authorization: Bearer <key>".
Create a key (printed once) with:

  %s keys create %s--principal NAME

%s
Each key's principal sees only its own requests.

`, prog, m.storeArgs(), keyPlaces(ep))
	default:
		fmt.Fprint(w, `No API keys: any program that can reach this endpoint may create requests, and read,
wait on or cancel any request whose id it knows (ids are in tool results and in this log).
Use --require-api-key when others share this machine or the address is reachable from elsewhere.

`)
	}
	m.printReviewers(w)
	connect := prog + " connect --url " + ep.URL
	switch {
	case oauth:
		connect += " --auth oauth"
	case keys:
		connect += " --require-api-key"
	}
	fmt.Fprintf(w, "Connect a host (docs/hosts.md explains each; \"%s HOST\" prints one in full):\n\n", connect)
	for _, h := range hostconfig.Hosts() {
		fmt.Fprintf(w, "  %s\n    %s\n\n", bannerLabel(h, ep), bannerLine(h, ep, connect))
	}
	fmt.Fprint(w, "Review URLs are logged here as requests are created. Stop with Ctrl-C.\n\n")
}

// keyPlaces says where each host takes the key, one line each: which
// hosts read $ELICITATION_API_KEY is read off their rendered configuration.
func keyPlaces(ep hostconfig.Endpoint) string {
	var readers []string
	var b strings.Builder
	for _, h := range hostconfig.Hosts() {
		snippets, _ := hostconfig.Render(h.Name, ep)
		if hostconfig.ReadsKey(snippets) {
			readers = append(readers, h.Title)
			continue
		}
		fmt.Fprintf(&b, "  %s: %s\n", h.Title, hostconfig.KeyHint(h.Name))
	}
	return fmt.Sprintf("Where each host takes it:\n  %s: read $%s (set it where the host starts)\n%s",
		strings.Join(readers, ", "), hostconfig.KeyVariable, b.String())
}

// invocation is how the user runs this program, for commands they can
// paste: "go run ./cmd/elicitation" under go run (make run), else the
// name or path they started it by (elicitation on PATH, bin/elicitation).
func invocation(arg0 string) string {
	if strings.Contains(arg0, "go-build") {
		return "go run ./cmd/elicitation"
	}
	return arg0
}

// storeArgs are the store flags a keys command needs to reach this
// server's keys ("" for the default data directory).
func (m *Main) storeArgs() string {
	c := m.Config
	switch {
	case c.Store == "dynamodb":
		return "--store dynamodb --table " + c.Table + " "
	case c.DataDir != compose.DefaultDataDir(os.Getenv):
		return "--data-dir " + shellQuote(c.DataDir) + " "
	}
	return ""
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '/' || r == '.' || r == '-' || r == '_' || r == ':' || r == '~' || r == '+' || r == ',' || r == '@' ||
			'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9')
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// bannerLine is one host's configuration on one line: its command where
// it has one, else its JSON compacted; a host whose configuration does not
// fit a line is pointed at "elicitation connect".
func bannerLine(h hostconfig.Host, ep hostconfig.Endpoint, connect string) string {
	s, ok := bannerSnippet(h, ep)
	switch {
	case !ok:
		return connect + " " + h.Name
	case s.Lang == "json":
		var b bytes.Buffer
		if err := json.Compact(&b, []byte(s.Text)); err == nil {
			return b.String()
		}
	}
	return s.Text
}

func bannerLabel(h hostconfig.Host, ep hostconfig.Endpoint) string {
	s, ok := bannerSnippet(h, ep)
	if !ok || s.Lang == "sh" {
		return h.Title + ":"
	}
	return h.Title + ", in " + s.Where + ":"
}

func bannerSnippet(h hostconfig.Host, ep hostconfig.Endpoint) (hostconfig.Snippet, bool) {
	snippets, err := hostconfig.Render(h.Name, ep)
	if err != nil {
		return hostconfig.Snippet{}, false
	}
	for _, s := range snippets {
		if s.Lang == "sh" {
			return s, true
		}
	}
	for _, s := range snippets {
		if s.Lang == "json" {
			return s, true
		}
	}
	return hostconfig.Snippet{}, false
}

// dialable turns a listener's URL on an unspecified address (--addr
// :8080, 0.0.0.0:8080 or [::]:8080, which no client can dial) into the
// loopback URL a host on this machine uses.
func dialable(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	if ip := net.ParseIP(u.Hostname()); u.Hostname() == "" || ip != nil && ip.IsUnspecified() {
		u.Host = net.JoinHostPort("127.0.0.1", u.Port())
	}
	return u.String()
}

func (m *Main) storeName() string {
	if m.Config.Store == "dynamodb" {
		return "DynamoDB table " + m.Config.Table
	}
	return "embedded, " + filepath.Join(m.Config.DataDir, "elicitation.db")
}

// printReviewers says who may decide: what a review link grants.
func (m *Main) printReviewers(w io.Writer) {
	s := m.Config
	if !s.SignIn() {
		fmt.Fprint(w, `No reviewer sign-in: a review link is a capability. Whoever holds it decides, and the
agent that created the request holds it too, so it could approve its own request. For
decisions that must be a person's, configure sign-in (--oidc-issuer; docs/security.md).

`)
		return
	}
	who := "any signed-in reviewer"
	if s.Reviewers != "" {
		who = s.Reviewers
	}
	bar := "barred"
	if !s.BarOwner {
		bar = "NOT barred (--bar-owner=false)"
	}
	fmt.Fprintf(w, `Reviewers sign in with %s: a review link alone decides nothing.
Requests that name no reviewers may be decided by %s;
the principal that created a request is %s from deciding it.

`, s.OIDCIssuer, who, bar)
}
