package plan

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/mcp-elicitation/elicitation/internal/proxy/config"
)

// Field is one required argument as the upstream schema and the
// configuration describe it.
type Field struct {
	name string
	raw  json.RawMessage // the upstream property schema; nil if undeclared
	prop map[string]any  // raw, decoded
	// upType is the upstream's JSON type for the value: "string",
	// "number", "integer", "boolean", "array", "object", or "" when the
	// schema does not say.
	upType string
	cfg    config.Field
}

func newField(t *Tool, name string, tc config.Tool) *Field {
	f := &Field{name: name, cfg: tc.Elicit.Fields[name]}
	if t != nil {
		f.raw = t.Properties[name]
	}
	if len(f.raw) > 0 {
		_ = json.Unmarshal(f.raw, &f.prop)
	}
	f.upType = schemaType(f.prop)
	return f
}

// schemaType reads a property's type; for a list of types it takes the
// first that is not "null", and without a type it infers one from an enum.
func schemaType(prop map[string]any) string {
	switch t := prop["type"].(type) {
	case string:
		return t
	case []any:
		for _, x := range t {
			if s, ok := x.(string); ok && s != "null" {
				return s
			}
		}
	}
	if enum, ok := prop["enum"].([]any); ok && len(enum) > 0 && allStrings(enum) {
		return "string"
	}
	return ""
}

func allStrings(xs []any) bool {
	for _, x := range xs {
		if _, ok := x.(string); !ok {
			return false
		}
	}
	return true
}

// elicitable reports whether a form can collect the value: primitives and
// lists chosen from an enumeration can; objects and other lists cannot.
func (f *Field) elicitable() bool {
	switch f.upType {
	case "object", "null":
		return false
	case "array":
		return f.multiSelectItems() != nil
	}
	return true
}

// multiSelectItems returns the items schema of a list whose values come from
// an enumeration of strings, or nil.
func (f *Field) multiSelectItems() map[string]any {
	items, ok := f.prop["items"].(map[string]any)
	if !ok {
		return nil
	}
	if enum, ok := items["enum"].([]any); ok && len(enum) > 0 && allStrings(enum) {
		return items
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		if opts, ok := items[k].([]any); ok && len(opts) > 0 && allConsts(opts) {
			return items
		}
	}
	return nil
}

func allConsts(opts []any) bool {
	for _, o := range opts {
		m, ok := o.(map[string]any)
		if !ok {
			return false
		}
		if _, ok := m["const"].(string); !ok {
			return false
		}
	}
	return true
}

// formType is the type the form asks for: the configured one, else the
// upstream's, else string.
func (f *Field) formType() string {
	switch {
	case f.cfg.Type != "":
		return f.cfg.Type
	case f.upType != "":
		return f.upType
	}
	return "string"
}

var formFormats = map[string]bool{"email": true, "uri": true, "date": true, "date-time": true}

// formProperty renders the field as a property of the MCP form subset of
// JSON Schema. Constraints are copied from the upstream schema only when the
// form asks for the upstream's own type.
func (f *Field) formProperty() json.RawMessage {
	obj := &Object{}
	set := func(k string, v any) {
		b, err := Marshal(v)
		if err == nil {
			obj.Set(k, b)
		}
	}
	typ := f.formType()
	set("type", typ)
	if title, ok := f.prop["title"].(string); ok && title != "" {
		set("title", title)
	}
	desc := f.cfg.Description
	if desc == "" {
		desc, _ = f.prop["description"].(string)
	}
	if desc != "" {
		set("description", desc)
	}
	if typ == f.upType {
		copyKeys := map[string][]string{
			"string":  {"enum", "enumNames", "oneOf", "minLength", "maxLength", "default"},
			"number":  {"minimum", "maximum", "default"},
			"integer": {"minimum", "maximum", "default"},
			"boolean": {"default"},
			"array":   {"minItems", "maxItems", "default"},
		}
		for _, k := range copyKeys[typ] {
			if v, ok := f.prop[k]; ok {
				set(k, v)
			}
		}
		if format, ok := f.prop["format"].(string); ok && typ == "string" && formFormats[format] {
			set("format", format)
		}
		if typ == "array" {
			set("items", f.multiSelectItems())
		}
	}
	b, _ := obj.MarshalJSON()
	return b
}

// formSchema is the requestedSchema asking for exactly fields, in order.
func formSchema(fields []*Field) json.RawMessage {
	props := &Object{}
	names := make([]string, 0, len(fields))
	for _, f := range fields {
		props.Set(f.name, f.formProperty())
		names = append(names, f.name)
	}
	b, _ := Marshal(struct {
		Type       string   `json:"type"`
		Properties *Object  `json:"properties"`
		Required   []string `json:"required"`
	}{"object", props, names})
	return b
}

// accept converts a submitted value to the upstream's type where the form
// asked for another, and checks it against the upstream property schema.
func (f *Field) accept(v any) (json.RawMessage, error) {
	if f.upType != "" && f.upType != f.formType() {
		c, err := convert(v, f.upType)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", f.name, err)
		}
		v = c
	}
	if len(f.raw) > 0 {
		// An upstream property schema that does not read checks nothing.
		if bad, err := checkValue(f.raw, v); err == nil && bad != nil {
			return nil, fmt.Errorf("field %s: %v", f.name, bad)
		}
	}
	b, err := Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("field %s: %w", f.name, err)
	}
	return b, nil
}

// checkValue validates v against the JSON schema raw: bad is why v does
// not fit it, err why the schema does not read.
func checkValue(raw json.RawMessage, v any) (bad, err error) {
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, err
	}
	r, err := s.Resolve(nil)
	if err != nil {
		return nil, err
	}
	return r.Validate(v), nil
}

// convert turns a form value into the JSON type the upstream declares.
func convert(v any, typ string) (any, error) {
	switch typ {
	case "string":
		switch x := v.(type) {
		case string:
			return x, nil
		case float64:
			return strconv.FormatFloat(x, 'f', -1, 64), nil
		case bool:
			return strconv.FormatBool(x), nil
		}
	case "number", "integer":
		var n float64
		switch x := v.(type) {
		case float64:
			n = x
		case json.Number:
			f, err := x.Float64()
			if err != nil {
				return nil, fmt.Errorf("%q is not a number", x)
			}
			n = f
		case string:
			f, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
			if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
				return nil, fmt.Errorf("%q is not a number", x)
			}
			n = f
		default:
			return nil, fmt.Errorf("%v is not a number", v)
		}
		if typ == "integer" && n != math.Trunc(n) {
			return nil, fmt.Errorf("%v is not a whole number", n)
		}
		return n, nil
	case "boolean":
		switch x := v.(type) {
		case bool:
			return x, nil
		case string:
			switch strings.ToLower(strings.TrimSpace(x)) {
			case "true", "yes", "y", "1":
				return true, nil
			case "false", "no", "n", "0":
				return false, nil
			}
			return nil, fmt.Errorf("%q is not true or false", x)
		}
	default:
		return v, nil
	}
	return nil, fmt.Errorf("%v cannot be a %s", v, typ)
}
