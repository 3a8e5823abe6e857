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
	// NeedsKey: the endpoint requires "Authorization: Bearer <key>"
	// (elicitation serve --require-api-key, or any deployment on AWS).
	NeedsKey bool
	// Name is the server's name in the host's configuration; default
	// "elicitation".
	Name string
}

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
	h, ok := byName[host]
	if !ok {
		return nil, fmt.Errorf("unknown host %q (one of %s)", host, strings.Join(Names(), ", "))
	}
	if ep.Name == "" {
		ep.Name = "elicitation"
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
}

func renderClaudeCode(ep Endpoint, add addFunc) {
	entry := obj{{"type", "http"}, {"url", ep.URL}}
	if ep.NeedsKey {
		entry = append(entry, kv{"headers", obj{{"Authorization", "Bearer ${" + KeyVariable + "}"}}}) // Claude Code expands ${VAR} in .mcp.json
	}
	add(".mcp.json (project, shared) or ~/.claude.json (claude mcp add --scope user)", "json", servers("mcpServers", ep.Name, entry))
	// -H/--header takes several values (Claude Code 2.1.x), so it goes
	// after the name and the URL.
	cmd := "claude mcp add --transport http " + ep.Name + " " + ep.URL
	if ep.NeedsKey {
		cmd += ` --header "Authorization: Bearer $` + KeyVariable + `"`
	}
	add("run in a shell", "sh", cmd)
}

func renderCursor(ep Endpoint, add addFunc) {
	entry := obj{{"url", ep.URL}}
	if ep.NeedsKey {
		entry = append(entry, kv{"headers", obj{{"Authorization", "Bearer ${env:" + KeyVariable + "}"}}})
	}
	add("~/.cursor/mcp.json (every project) or .cursor/mcp.json (this project)", "json", servers("mcpServers", ep.Name, entry))
}

func renderVSCode(ep Endpoint, add addFunc) {
	entry := obj{{"type", "http"}, {"url", ep.URL}}
	var doc obj
	if ep.NeedsKey {
		entry = append(entry, kv{"headers", obj{{"Authorization", "Bearer ${input:" + ep.Name + "-api-key}"}}})
		doc = append(doc, kv{"inputs", []any{obj{
			{"type", "promptString"}, {"id", ep.Name + "-api-key"},
			{"description", "API key of the elicitation server (elk_…)"}, {"password", true},
		}}})
	}
	doc = append(doc, kv{"servers", obj{{ep.Name, entry}}})
	add(".vscode/mcp.json (workspace) or the user mcp.json (MCP: Open User Configuration)", "json", indent(doc))
	if !ep.NeedsKey {
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
	if ep.NeedsKey {
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
	if ep.NeedsKey {
		b.WriteString("    headers:\n      Authorization: Bearer elk_…\n")
	}
	b.WriteString("    timeout: 300\n    description: Ask a human to approve, fill a form or choose, and wait for the answer")
	add("~/.config/goose/config.yaml ("+GooseMerge+")", "yaml", b.String())
	if !ep.NeedsKey {
		add("run in a shell", "sh", "goose session --with-streamable-http-extension "+ep.URL)
	}
}

func renderInspector(ep Endpoint, add addFunc) {
	cli := "npx @modelcontextprotocol/inspector --cli " + ep.URL + " --transport http --method tools/list"
	if !ep.NeedsKey {
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
