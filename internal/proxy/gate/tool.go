package gate

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Tool is what the gate reads of an upstream tool's listing.
type Tool struct {
	Name        string
	Title       string
	Description string
	// Annotations are the tool's own hints; nil when it has none.
	Annotations *mcp.ToolAnnotations
	// Properties are the input schema's properties, raw.
	Properties map[string]json.RawMessage
}

// ParseTool reads a tool as the upstream listed it.
func ParseTool(raw json.RawMessage) (Tool, error) {
	var t struct {
		Name        string               `json:"name"`
		Title       string               `json:"title"`
		Description string               `json:"description"`
		Annotations *mcp.ToolAnnotations `json:"annotations"`
		InputSchema struct {
			Properties map[string]json.RawMessage `json:"properties"`
		} `json:"inputSchema"`
	}
	if err := json.Unmarshal(raw, &t); err != nil {
		return Tool{}, fmt.Errorf("reading the tool listing: %w", err)
	}
	return Tool{Name: t.Name, Title: t.Title, Description: t.Description, Annotations: t.Annotations, Properties: t.InputSchema.Properties}, nil
}

// Destructive reports whether the tool's annotations say it may destroy,
// reading them as the MCP specification defines their defaults:
// readOnlyHint defaults to false and destructiveHint to true, so a tool
// without annotations may destroy, and one that declares readOnlyHint true
// or destructiveHint false does not.
func (t Tool) Destructive() bool {
	a := t.Annotations
	if a == nil {
		return true
	}
	if a.ReadOnlyHint {
		return false
	}
	return a.DestructiveHint == nil || *a.DestructiveHint
}

// object decodes call arguments into a map (numbers kept exact); absent or
// null arguments are empty.
func object(args json.RawMessage) (map[string]any, error) {
	args = bytes.TrimSpace(args)
	if len(args) == 0 || string(args) == "null" {
		return map[string]any{}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("arguments are not a JSON object: %w", err)
	}
	if m == nil {
		m = map[string]any{}
	}
	return m, nil
}
