package gate

import (
	"encoding/json"

	"github.com/mcp-elicitation/elicitation/internal/proxy/plan"
)

// Masked replaces a sensitive value in what the reviewer sees.
const Masked = "•••••• (masked)"

// Mask returns the arguments as the reviewer sees them: every value whose
// name, or whose schema's title, description, format or writeOnly, the
// sensitive matcher flags is replaced by Masked, at any depth (nested
// objects use their own properties where the schema gives them). A nil
// matcher masks nothing.
func Mask(args map[string]any, props map[string]json.RawMessage, m *plan.Matcher) map[string]any {
	out := make(map[string]any, len(args))
	for k, v := range args {
		schema := decodeSchema(props[k])
		if _, ok := m.Match(k, plan.PropertyOf(schema)); ok {
			out[k] = Masked
			continue
		}
		out[k] = maskValue(v, schema, m)
	}
	return out
}

func maskValue(v any, schema map[string]any, m *plan.Matcher) any {
	switch x := v.(type) {
	case map[string]any:
		return Mask(x, rawProps(schema["properties"]), m)
	case []any:
		items, _ := schema["items"].(map[string]any)
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = maskValue(e, items, m)
		}
		return out
	}
	return v
}

func decodeSchema(raw json.RawMessage) map[string]any {
	var s map[string]any
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &s)
	}
	return s
}

func rawProps(v any) map[string]json.RawMessage {
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	out := make(map[string]json.RawMessage, len(m))
	for k, p := range m {
		b, err := json.Marshal(p)
		if err == nil {
			out[k] = b
		}
	}
	return out
}
