package hostconfig

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
)

// KeyVariable is the environment variable the rendered configurations
// read the API key from, where the host can read one.
const KeyVariable = "ELICITATION_API_KEY"

// Endpoint is what a host connects to.
type Endpoint struct {
	URL string // the MCP endpoint, http://127.0.0.1:8080/mcp or https://…/mcp
	// NeedsKey: the endpoint refuses requests without a credential: an
	// API key, "Authorization: Bearer <key>" (elicitation serve
	// --require-api-key, or any deployment on AWS), or, where the server
	// runs OAuth (--oauth), a token the host gets by signing the person in.
	NeedsKey bool
	// Auth is how the host authenticates; "" for the host's default: an
	// API key where the host sends one (what "connect" always rendered),
	// else OAuth.
	Auth Auth
	// Name is the server's name in the host's configuration; default
	// "elicitation".
	Name string
}

// Auth is how a host authenticates to the endpoint.
type Auth string

const (
	// AuthKey: a static "Authorization: Bearer <API key>" when the
	// endpoint requires a credential, nothing otherwise.
	AuthKey Auth = "key"
	// AuthOAuth: no static header; the host runs the MCP authorization
	// flow (the server with --oauth) and signs the person in.
	AuthOAuth Auth = "oauth"
	// authNone: nothing to send (an endpoint without keys, on a host that
	// sends no keys); what Render resolves AuthKey to there.
	authNone Auth = "none"
)

// ParseAuth reads "key" or "oauth" ("" is the host's default).
func ParseAuth(s string) (Auth, error) {
	switch a := Auth(s); a {
	case "", AuthKey, AuthOAuth:
		return a, nil
	}
	return "", fmt.Errorf("auth %q: key (an API key in a static Authorization header) or oauth (the host signs the person in)", s)
}

// resolve settles ep.Auth for h: the default, and whether h can do it.
// Without a credential to send (an endpoint without keys) a host sends
// nothing, unless OAuth was asked for (the server runs it).
func (ep Endpoint) resolve(h Host) (Endpoint, error) {
	a := ep.Auth
	switch {
	case a == AuthKey && !h.Key:
		return ep, fmt.Errorf("%s sends no API key (it takes OAuth or no auth at all, docs/hosts.md): use --auth oauth, with a server that runs OAuth (--oauth)", h.Title)
	case a == AuthOAuth && !h.OAuth:
		return ep, fmt.Errorf("%s cannot sign in with OAuth (docs/hosts.md): use --auth key", h.Title)
	case a == "" && h.Key:
		a = AuthKey
	case a == "":
		a = AuthOAuth
	}
	if !ep.NeedsKey && (a == AuthKey || ep.Auth == "") {
		a = authNone
	}
	ep.Auth = a
	return ep, nil
}

// key reports whether the host's configuration carries the API key.
func (ep Endpoint) key() bool { return ep.Auth == AuthKey }

// Snippet is one piece of ready-to-paste configuration.
type Snippet struct {
	Host  Host
	Where string // the file it goes in, or "shell"
	Lang  string // "json", "yaml" or "sh"
	Text  string // without a trailing newline
}

// Render returns the configuration of host for ep: the file entry first
// (what "elicitation connect HOST > FILE" writes), then, where the host
// has one, the command that writes it.
func Render(host string, ep Endpoint) ([]Snippet, error) {
	h, err := Lookup(host)
	if err != nil {
		return nil, err
	}
	if ep.Name == "" {
		ep.Name = "elicitation"
	}
	if ep, err = ep.resolve(h); err != nil {
		return nil, err
	}
	if h.Connector && !strings.HasPrefix(ep.URL, "https://") {
		return nil, fmt.Errorf("%s reaches a server from its vendor's servers, never from your machine: it needs the server's public https URL (--url https://…/mcp, or --public-url: a tunnel to this server, or the AWS stack's URL), not %s", h.Title, ep.URL)
	}
	var out []Snippet
	renderers[host](ep, func(where, lang, text string) {
		out = append(out, Snippet{Host: h, Where: where, Lang: lang, Text: text})
	})
	return out, nil
}

// GooseMerge tells how the Goose snippet joins an existing config.yaml.
const GooseMerge = "a config.yaml has one extensions: map: if yours has one, add the " +
	"entry under it (indented as shown) instead of a second extensions:"

type addFunc func(where, lang, text string)

var renderers = map[string]func(Endpoint, addFunc){
	ClaudeCode:    renderClaudeCode,
	Cursor:        renderCursor,
	VSCode:        renderVSCode,
	ClaudeDesktop: renderClaudeDesktop,
	Goose:         renderGoose,
	Inspector:     renderInspector,
	ClaudeAI:      renderClaudeAI,
	ChatGPT:       renderChatGPT,
}

func renderClaudeCode(ep Endpoint, add addFunc) {
	entry := obj{{"type", "http"}, {"url", ep.URL}}
	if ep.key() {
		entry = append(entry, kv{"headers", obj{{"Authorization", "Bearer ${" + KeyVariable + "}"}}}) // Claude Code expands ${VAR} in .mcp.json
	}
	add(".mcp.json (project, shared) or ~/.claude.json (claude mcp add --scope user)", "json", servers("mcpServers", ep.Name, entry))
	// -H/--header takes several values (Claude Code 2.1.x), so it goes
	// after the name and the URL.
	cmd := "claude mcp add --transport http " + ep.Name + " " + ep.URL
	if ep.key() {
		cmd += ` --header "Authorization: Bearer $` + KeyVariable + `"`
	}
	add("run in a shell", "sh", cmd)
}

func renderCursor(ep Endpoint, add addFunc) {
	entry := obj{{"url", ep.URL}}
	if ep.key() {
		entry = append(entry, kv{"headers", obj{{"Authorization", "Bearer ${env:" + KeyVariable + "}"}}})
	}
	add("~/.cursor/mcp.json (every project) or .cursor/mcp.json (this project)", "json", servers("mcpServers", ep.Name, entry))
}

func renderVSCode(ep Endpoint, add addFunc) {
	entry := obj{{"type", "http"}, {"url", ep.URL}}
	var doc obj
	if ep.key() {
		entry = append(entry, kv{"headers", obj{{"Authorization", "Bearer ${input:" + ep.Name + "-api-key}"}}})
		doc = append(doc, kv{"inputs", []any{obj{
			{"type", "promptString"}, {"id", ep.Name + "-api-key"},
			{"description", "API key of the elicitation server (elk_…)"}, {"password", true},
		}}})
	}
	doc = append(doc, kv{"servers", obj{{ep.Name, entry}}})
	add(".vscode/mcp.json (workspace) or the user mcp.json (MCP: Open User Configuration)", "json", indent(doc))
	if !ep.key() {
		one := strings.Join(strings.Fields(indent(obj{{"name", ep.Name}, {"type", "http"}, {"url", ep.URL}})), " ")
		add("run in a shell", "sh", "code --add-mcp '"+one+"'")
	}
}

// renderClaudeDesktop: Claude Desktop's file starts stdio servers only;
// mcp-remote bridges stdio to streamable HTTP.
func renderClaudeDesktop(ep Endpoint, add addFunc) {
	args := []any{"-y", "mcp-remote", ep.URL}
	if u, err := url.Parse(ep.URL); err == nil && u.Scheme == "http" && !mcpRemoteAllowsHTTP(u.Hostname()) {
		args = append(args, "--allow-http")
	}
	var env obj
	if ep.key() {
		// No space inside the argument (Windows quoting); mcp-remote
		// substitutes ${VAR} from env itself.
		args = append(args, "--header", "Authorization:${ELICITATION_AUTH}")
		env = obj{{"ELICITATION_AUTH", "Bearer elk_…"}}
	}
	entry := obj{{"command", "npx"}, {"args", args}}
	if env != nil {
		entry = append(entry, kv{"env", env})
	}
	add("claude_desktop_config.json (Settings → Developer → Edit Config)", "json", servers("mcpServers", ep.Name, entry))
}

func renderGoose(ep Endpoint, add addFunc) {
	var b strings.Builder
	fmt.Fprintf(&b, "extensions:\n  %s:\n    enabled: true\n    type: streamable_http\n    name: %s\n    uri: %s\n", ep.Name, ep.Name, ep.URL)
	if ep.key() {
		b.WriteString("    headers:\n      Authorization: Bearer elk_…\n")
	}
	b.WriteString("    timeout: 300\n    description: " + description)
	add("~/.config/goose/config.yaml ("+GooseMerge+")", "yaml", b.String())
	if !ep.key() {
		add("run in a shell", "sh", "goose session --with-streamable-http-extension "+ep.URL)
	}
}

func renderInspector(ep Endpoint, add addFunc) {
	cli := "npx @modelcontextprotocol/inspector --cli " + ep.URL + " --transport http --method tools/list"
	if !ep.key() {
		add("run in a shell", "sh", cli)
		return
	}
	// The CLI's --header reads every word up to the next option as a
	// header, so it goes last; Inspector 2.x's web UI takes the key among
	// the server's Custom Headers. docs/hosts.md shows both, as here.
	add("run in a shell", "sh", cli+` --header "Authorization: Bearer $`+KeyVariable+`"`)
	add("web UI", "text", "npx @modelcontextprotocol/inspector\n"+
		"  a server of type Streamable HTTP, URL: "+ep.URL+"\n"+
		"  Custom Headers: Authorization = Bearer elk_…   then Connect")
}

// SignIn says what the person does to sign in, for a host that uses
// OAuth; "" for one that does not.
func SignIn(host string, ep Endpoint) string {
	h, err := Lookup(host)
	if err != nil {
		return ""
	}
	if ep.Name == "" {
		ep.Name = "elicitation"
	}
	if ep, err = ep.resolve(h); err != nil || ep.Auth != AuthOAuth {
		return ""
	}
	return strings.ReplaceAll(h.SignIn, "NAME", ep.Name)
}

// consent is what the person sees after the identity provider: the
// server's consent page, the same for every host that signs in with OAuth.
func consent(client, returnsTo string) string {
	return "then the server's consent page, on its review address, names the client (" + client + "), where it returns (" + returnsTo + ") and what it may do: Approve"
}

// renderClaudeAI: a custom connector of claude.ai, which Claude Desktop
// and the mobile apps share; no configuration file, so the URL and the
// steps. Claude takes OAuth (registration or a client ID metadata
// document) or no auth, never a static header.
func renderClaudeAI(ep Endpoint, add addFunc) {
	add("Remote MCP server URL", "url", ep.URL)
	connect := "Add. Claude connects without signing in: the server takes anyone who has the URL."
	if ep.Auth == AuthOAuth {
		connect = "Add, then Connect: Claude sends you to the server's sign-in (the reviewers' OpenID Connect issuer, --oidc-issuer); " +
			consent("Claude", "claude.ai") + "."
	}
	add("steps", "text", strings.Join([]string{
		"1. claude.ai → Customize → Connectors (earlier: Settings → Connectors) → + → Add custom connector. On Team and Enterprise plans an Owner adds it to the organization first; each member then connects.",
		"2. Name: " + ep.Name + ". Remote MCP server URL: " + ep.URL + ". Leave Advanced settings (OAuth Client ID, Client Secret) empty: Claude registers itself.",
		"3. " + connect,
		"4. In a chat: + → Connectors → turn " + ep.Name + " on. Claude Desktop and the Claude mobile apps use the connectors added to your account.",
		"Claude reaches the server from Anthropic's servers, also for Claude Desktop and the mobile apps: the URL must be https on a public address (a tunnel to this server with --public-url set to it, or the AWS stack's URL).",
	}, "\n"))
}

// renderChatGPT: a connector (an app in developer mode) of ChatGPT; the
// URL and the steps. ChatGPT takes OAuth 2.1 with PKCE (a client ID
// metadata document, registration or a predefined client) or no auth.
func renderChatGPT(ep Endpoint, add addFunc) {
	add("MCP server URL", "url", ep.URL)
	auth, create := "No authentication", "Create: ChatGPT lists the tools. The server takes anyone who has the URL."
	if ep.Auth == AuthOAuth {
		auth = "OAuth (leave the client ID and secret empty: ChatGPT registers itself)"
		create = "Create: ChatGPT sends you to the server's sign-in (the reviewers' OpenID Connect issuer, --oidc-issuer); " +
			consent("ChatGPT", "chatgpt.com") + ". ChatGPT then lists the tools."
	}
	add("steps", "text", strings.Join([]string{
		"1. ChatGPT → Settings → Apps & Connectors (earlier: Connectors) → Advanced settings → turn Developer mode on. On Business, Enterprise and Edu plans a workspace admin allows it first.",
		"2. Settings → Apps & Connectors → Create. Name: " + ep.Name + ". Description: " + description + ". MCP server URL: " + ep.URL + ". Authentication: " + auth + ".",
		"3. " + create,
		"4. In a chat: + → Developer mode → turn " + ep.Name + " on.",
		"ChatGPT reaches the server from OpenAI's servers: the URL must be https on a public address (a tunnel to this server with --public-url set to it, or the AWS stack's URL).",
	}, "\n"))
}

// description is the server's one line for people, where a host asks.
const description = "Ask a human to approve, fill a form or choose, and wait for the answer"

func servers(key, name string, entry obj) string {
	return indent(obj{{key, obj{{name, entry}}}})
}

// obj is a JSON object that keeps its keys in the order written.
type obj []kv

type kv struct {
	k string
	v any
}

func (o obj) MarshalJSON() ([]byte, error) {
	var b strings.Builder
	b.WriteByte('{')
	for i, e := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(e.k)
		v, err := marshal(e.v)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return []byte(b.String()), nil
}

func marshal(v any) ([]byte, error) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return []byte(strings.TrimSuffix(b.String(), "\n")), nil
}

func indent(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		panic(err) // only maps of strings and lists
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// mcpRemoteAllowsHTTP: mcp-remote (0.15) takes plain http without
// --allow-http for these hosts only; not for [::1].
func mcpRemoteAllowsHTTP(host string) bool {
	return host == "localhost" || host == "127.0.0.1"
}

// Hosts returns every host in the order docs/hosts.md presents them.
func Hosts() []Host { return append([]Host(nil), hosts...) }

// ReadsKey reports whether a host's rendered configuration reads the API
// key from $KeyVariable (rather than holding it, or a header, itself).
func ReadsKey(snippets []Snippet) bool {
	for _, s := range snippets {
		if strings.Contains(s.Text, KeyVariable) {
			return true
		}
	}
	return false
}

// KeyHint says where a host that does not read KeyVariable takes the
// API key, as its rendered configuration has it.
func KeyHint(host string) string {
	switch host {
	case VSCode:
		return "asks for it once (an input of its mcp.json)"
	case ClaudeDesktop:
		return "env.ELICITATION_AUTH of its entry (replace elk_…)"
	case Goose:
		return "the Authorization header in config.yaml (replace elk_…)"
	}
	return "see docs/hosts.md"
}
