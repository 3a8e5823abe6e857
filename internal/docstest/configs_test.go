package docstest

import (
	"encoding/json"
	"fmt"

	"github.com/mcp-elicitation/elicitation/internal/hostconfig"
	"github.com/mcp-elicitation/elicitation/internal/hostconfig/hostconfigtest"
	proxyconfig "github.com/mcp-elicitation/elicitation/internal/proxy/config"
)

// checkHostJSON validates a JSON block that configures MCP servers: an
// explicit host=NAME, else a top-level "mcpServers" (the shape Claude
// Code, Cursor and Claude Desktop share) or "servers" (VS Code).
func checkHostJSON(host string, v any) error {
	top, _ := v.(map[string]any)
	switch {
	case host != "":
		return hostconfigtest.Validate(host, v)
	case top["mcpServers"] != nil:
		return hostconfigtest.Validate("", v)
	case top["servers"] != nil:
		return hostconfigtest.Validate(hostconfig.VSCode, v)
	}
	return nil
}

// checkYAML validates a YAML block: a proxy configuration (it has an
// "upstream") through the proxy's own loader, a Goose config.yaml (it has
// "extensions" or host=goose) against Goose's shape.
func (c *Checker) checkYAML(b Block, v any) error {
	top, _ := v.(map[string]any)
	switch {
	case b.Host != "":
		return hostconfigtest.Validate(b.Host, normalizeYAML(v))
	case top["extensions"] != nil:
		return hostconfigtest.Validate(hostconfig.Goose, normalizeYAML(v))
	case top["upstream"] != nil:
		if _, err := proxyconfig.ParseWith([]byte(b.Text), proxyconfig.Options{}); err != nil {
			return fmt.Errorf("the proxy refuses this configuration: %v", err)
		}
	}
	return nil
}

// normalizeYAML turns yaml.v3's map[string]interface{} trees (already the
// default for string keys) into the shapes Validate reads.
func normalizeYAML(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = normalizeYAML(e)
		}
		return x
	case map[any]any:
		m := map[string]any{}
		for k, e := range x {
			m[fmt.Sprint(k)] = normalizeYAML(e)
		}
		return m
	case []any:
		for i, e := range x {
			x[i] = normalizeYAML(e)
		}
	}
	return v
}

// validateJSONEntry validates one server entry given on a command line
// (claude mcp add-json, code --add-mcp).
func validateJSONEntry(host, text string) error {
	var v map[string]any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		return fmt.Errorf("not a JSON object: %v", err)
	}
	return hostconfigtest.ValidateServer(host, v)
}
