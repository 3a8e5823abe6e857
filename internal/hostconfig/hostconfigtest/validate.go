// Package hostconfigtest validates MCP host configuration against the
// shape each host documents for its servers (docs/hosts.md cites each
// host's documentation): the docs test checks every configuration block
// with it, and the tests of hostconfig and of the banner check what they
// render. No shipped program validates a host's file, so it lives here.
package hostconfigtest

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/mcp-elicitation/elicitation/internal/hostconfig"
)

// Validate checks a parsed configuration (JSON or YAML decoded into
// map[string]any) against the shape host documents for its MCP servers
// (docs/hosts.md cites each host's documentation). host is a Host name,
// or "" for a generic "mcpServers" file (Claude Code's .mcp.json and
// Cursor's mcp.json share it).
func Validate(host string, doc any) error {
	top, ok := doc.(map[string]any)
	if !ok {
		return fmt.Errorf("a %s configuration is an object, not %T", hostLabel(host), doc)
	}
	switch host {
	case "", hostconfig.ClaudeCode, hostconfig.Cursor, hostconfig.ClaudeDesktop:
		return validateMCPServers(host, top)
	case hostconfig.VSCode:
		return validateVSCode(top)
	case hostconfig.Goose:
		return validateGoose(top)
	case hostconfig.Inspector:
		return validateMCPServers(hostconfig.Inspector, top)
	}
	return fmt.Errorf("unknown host %q (one of %s)", host, strings.Join(hostconfig.Names(), ", "))
}

func hostLabel(host string) string {
	for _, h := range hostconfig.Hosts() {
		if h.Name == host {
			return h.Title
		}
	}
	return "mcpServers"
}

func validateMCPServers(host string, top map[string]any) error {
	if err := onlyKeys("the file", top, "mcpServers"); err != nil {
		if host == "" {
			// A generic snippet may sit in a larger file (Claude Code's
			// ~/.claude.json); only the mcpServers entry is checked.
		} else {
			return err
		}
	}
	servers, ok := top["mcpServers"].(map[string]any)
	if !ok {
		return fmt.Errorf(`a %s configuration keeps its servers in an "mcpServers" object`, hostLabel(host))
	}
	if len(servers) == 0 {
		return fmt.Errorf(`"mcpServers" is empty`)
	}
	for _, name := range slices.Sorted(maps.Keys(servers)) {
		entry, ok := servers[name].(map[string]any)
		if !ok {
			return fmt.Errorf("mcpServers.%s is not an object", name)
		}
		if err := validateEntry(host, "mcpServers."+name, entry); err != nil {
			return err
		}
	}
	return nil
}

// validateEntry checks one server entry: started by the host (command)
// or remote (url), never both.
func validateEntry(host, at string, e map[string]any) error {
	_, hasURL := e["url"]
	_, hasCmd := e["command"]
	switch {
	case hasURL && hasCmd:
		return fmt.Errorf("%s has both url and command: a server is either remote (url) or started by the host (command)", at)
	case !hasURL && !hasCmd:
		return fmt.Errorf("%s has neither url nor command", at)
	case hasURL && host == hostconfig.ClaudeDesktop:
		return fmt.Errorf("%s: Claude Desktop's configuration file starts local (stdio) servers only and skips url entries; bridge with mcp-remote (docs/hosts.md)", at)
	case hasCmd:
		return validateCommandEntry(at, e)
	}
	return validateRemoteEntry(host, at, e)
}

// validateCommandEntry checks a stdio server the host starts.
func validateCommandEntry(at string, e map[string]any) error {
	if err := onlyKeys(at, e, "type", "command", "args", "env", "envFile", "cwd"); err != nil {
		return err
	}
	if err := isString(at+".command", e["command"]); err != nil {
		return err
	}
	if t, ok := e["type"]; ok && t != "stdio" {
		return fmt.Errorf(`%s.type %v: a server with a command is "stdio"`, at, t)
	}
	if a, ok := e["args"]; ok {
		if err := isStringList(at+".args", a); err != nil {
			return err
		}
	}
	if env, ok := e["env"]; ok {
		return isStringMap(at+".env", env)
	}
	return nil
}

// validateRemoteEntry checks a server the host reaches at a URL.
func validateRemoteEntry(host, at string, e map[string]any) error {
	if err := onlyKeys(at, e, "type", "url", "headers", "headersHelper", "timeout", "oauth"); err != nil {
		return err
	}
	if err := isURL(at+".url", e["url"]); err != nil {
		return err
	}
	if err := remoteType(host, at, e); err != nil {
		return err
	}
	if h, ok := e["headers"]; ok {
		return validateHeaders(at+".headers", h)
	}
	return nil
}

func remoteType(host, at string, e map[string]any) error {
	t, hasType := e["type"]
	switch {
	case host == hostconfig.ClaudeCode && !hasType:
		return fmt.Errorf(`%s: Claude Code reads an entry without "type" as a stdio server; remote servers need "type": "http"`, at)
	case hasType && t != "http" && t != "sse" && t != "streamable-http":
		return fmt.Errorf(`%s.type %v: a remote server is "http" (streamable HTTP) or "sse"`, at, t)
	case host == hostconfig.ClaudeCode && t == "streamable-http":
		return fmt.Errorf(`%s.type: Claude Code calls streamable HTTP "http"`, at)
	}
	return nil
}

func validateHeaders(at string, h any) error {
	if err := isStringMap(at, h); err != nil {
		return err
	}
	for k, v := range h.(map[string]any) {
		if strings.EqualFold(k, "Authorization") && !strings.HasPrefix(v.(string), "Bearer ") {
			return fmt.Errorf(`%s.%s must be "Bearer <key>" (the server reads a bearer API key)`, at, k)
		}
		if strings.ContainsAny(k, " :") {
			return fmt.Errorf("%s: %q is not a header name", at, k)
		}
	}
	return nil
}

// VS Code: .vscode/mcp.json or the user's mcp.json, {"servers": {}, "inputs": []}.
func validateVSCode(top map[string]any) error {
	if err := onlyKeys("the file", top, "servers", "inputs"); err != nil {
		return fmt.Errorf(`VS Code's mcp.json: %w (VS Code names the object "servers", not "mcpServers")`, err)
	}
	servers, ok := top["servers"].(map[string]any)
	if !ok || len(servers) == 0 {
		return fmt.Errorf(`VS Code's mcp.json keeps its servers in a non-empty "servers" object`)
	}
	inputs := map[string]bool{}
	if in, ok := top["inputs"]; ok {
		list, ok := in.([]any)
		if !ok {
			return fmt.Errorf(`"inputs" is a list`)
		}
		for i, x := range list {
			m, ok := x.(map[string]any)
			if !ok {
				return fmt.Errorf("inputs[%d] is not an object", i)
			}
			at := fmt.Sprintf("inputs[%d]", i)
			if err := onlyKeys(at, m, "type", "id", "description", "password", "default", "options"); err != nil {
				return err
			}
			if m["type"] != "promptString" && m["type"] != "pickString" {
				return fmt.Errorf(`%s.type %v: "promptString" or "pickString"`, at, m["type"])
			}
			id, _ := m["id"].(string)
			if id == "" {
				return fmt.Errorf("%s needs an id", at)
			}
			inputs[id] = true
		}
	}
	for _, name := range slices.Sorted(maps.Keys(servers)) {
		at := "servers." + name
		e, ok := servers[name].(map[string]any)
		if !ok {
			return fmt.Errorf("%s is not an object", at)
		}
		if _, ok := e["type"]; !ok {
			return fmt.Errorf(`%s needs "type" ("http", "sse" or "stdio")`, at)
		}
		if err := validateEntry(hostconfig.VSCode, at, e); err != nil {
			return err
		}
		if h, ok := e["headers"].(map[string]any); ok {
			for k, v := range h {
				for _, ref := range inputRefs(v.(string)) {
					if !inputs[ref] {
						return fmt.Errorf("%s.headers.%s uses ${input:%s}, which no entry of \"inputs\" defines", at, k, ref)
					}
				}
			}
		}
	}
	return nil
}

func inputRefs(s string) []string {
	var refs []string
	for {
		i := strings.Index(s, "${input:")
		if i < 0 {
			return refs
		}
		s = s[i+len("${input:"):]
		j := strings.IndexByte(s, '}')
		if j < 0 {
			return append(refs, s)
		}
		refs = append(refs, s[:j])
		s = s[j:]
	}
}

// Goose: ~/.config/goose/config.yaml, extensions: NAME: {type: streamable_http, uri, …}.
func validateGoose(top map[string]any) error {
	ext, ok := top["extensions"].(map[string]any)
	if !ok || len(ext) == 0 {
		return fmt.Errorf(`a Goose config.yaml keeps MCP servers under a non-empty "extensions" map`)
	}
	for _, name := range slices.Sorted(maps.Keys(ext)) {
		at := "extensions." + name
		e, ok := ext[name].(map[string]any)
		if !ok {
			return fmt.Errorf("%s is not a map", at)
		}
		if err := onlyKeys(at, e, "enabled", "type", "name", "uri", "headers", "envs", "env_keys", "timeout", "description", "bundled", "available_tools", "cmd", "args"); err != nil {
			return err
		}
		switch e["type"] {
		case "streamable_http":
			if err := isURL(at+".uri", e["uri"]); err != nil {
				return err
			}
		case "stdio":
			if err := isString(at+".cmd", e["cmd"]); err != nil {
				return err
			}
		default:
			return fmt.Errorf(`%s.type %v: "streamable_http" for a URL ("stdio" with cmd for a command)`, at, e["type"])
		}
		if _, ok := e["enabled"].(bool); !ok {
			return fmt.Errorf("%s.enabled must be true or false", at)
		}
		if err := isString(at+".name", e["name"]); err != nil {
			return fmt.Errorf("%w (Goose names every extension)", err)
		}
		if t, ok := e["timeout"]; ok {
			if _, ok := t.(int); !ok {
				return fmt.Errorf("%s.timeout is a number of seconds", at)
			}
		}
		if h, ok := e["headers"]; ok {
			if err := validateHeaders(at+".headers", h); err != nil {
				return err
			}
		}
	}
	return nil
}

func onlyKeys(at string, m map[string]any, allowed ...string) error {
	ok := map[string]bool{}
	for _, k := range allowed {
		ok[k] = true
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if !ok[k] {
			return fmt.Errorf("%s: unknown key %q (known: %s)", at, k, strings.Join(allowed, ", "))
		}
	}
	return nil
}

func isString(at string, v any) error {
	if s, ok := v.(string); !ok || s == "" {
		return fmt.Errorf("%s must be a non-empty string", at)
	}
	return nil
}

func isURL(at string, v any) error {
	s, ok := v.(string)
	if !ok || !(strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://")) {
		return fmt.Errorf("%s must be an http:// or https:// URL, got %v", at, v)
	}
	return nil
}

func isStringList(at string, v any) error {
	l, ok := v.([]any)
	if !ok {
		return fmt.Errorf("%s must be a list of strings", at)
	}
	for i, x := range l {
		if _, ok := x.(string); !ok {
			return fmt.Errorf("%s[%d] must be a string", at, i)
		}
	}
	return nil
}

func isStringMap(at string, v any) error {
	m, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("%s must be an object of strings", at)
	}
	for k, x := range m {
		if _, ok := x.(string); !ok {
			return fmt.Errorf("%s.%s must be a string", at, k)
		}
	}
	return nil
}

// ValidateServer checks one server entry as a host's command line takes it:
// "claude mcp add-json NAME JSON" (Claude Code) or "code --add-mcp JSON"
// (VS Code, whose entry also carries its "name").
func ValidateServer(host string, e map[string]any) error {
	switch host {
	case hostconfig.VSCode:
		name, _ := e["name"].(string)
		if name == "" {
			return fmt.Errorf(`code --add-mcp needs "name" in its JSON`)
		}
		rest := map[string]any{}
		for k, v := range e {
			if k != "name" {
				rest[k] = v
			}
		}
		if _, ok := rest["type"]; !ok {
			return fmt.Errorf(`the server needs "type" ("http", "sse" or "stdio")`)
		}
		return validateEntry(hostconfig.VSCode, "the server", rest)
	default:
		return validateEntry(host, "the server", e)
	}
}
