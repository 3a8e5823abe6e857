package mcptools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// maxHostContext bounds the context shown in the host form's message; the
// rest is on the review page.
const maxHostContext = 4000

// hostFormParams is the form-mode elicitation that asks for st's decision
// in the host.
func hostFormParams(st elicitation.State, p elicitation.Payload) (*mcp.ElicitParams, error) {
	props := map[string]any{}
	var required []string
	message := p.Message
	if st.Kind == elicitation.KindSelection {
		props[hostSelection] = selectionProperty(p)
		if p.MinSelections > 0 {
			required = append(required, hostSelection)
		}
	} else {
		if p.Schema != nil {
			var sch struct {
				Properties map[string]json.RawMessage `json:"properties"`
				Required   []string                   `json:"required"`
			}
			if err := json.Unmarshal(p.Schema.Raw, &sch); err != nil {
				return nil, fmt.Errorf("host form of %s: read requestedSchema: %w", st.ID, err)
			}
			for k, v := range sch.Properties {
				props[k] = v
			}
			required = sch.Required
		}
		if len(p.Context) > 0 {
			message += "\n\n" + contextText(p.Context)
		}
	}
	props[commentField(p)] = map[string]any{"type": "string", "title": "Comment (optional)", "maxLength": elicitation.MaxCommentChars}
	schema := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		schema["required"] = required
	}
	return &mcp.ElicitParams{Mode: "form", Message: message, RequestedSchema: schema}, nil
}

// contextText is an approval's context as the host form's message shows it.
func contextText(ctx json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Indent(&b, ctx, "", "  "); err != nil {
		b.Reset()
		b.Write(ctx)
	}
	s := b.String()
	if len(s) > maxHostContext {
		s = strings.ToValidUTF8(s[:maxHostContext], "") + "\n… (the rest is on the review page)"
	}
	return s
}

// selectionProperty is a selection's options as the spec's titled
// single-select (exactly one) or multi-select enum within its bounds.
func selectionProperty(p elicitation.Payload) map[string]any {
	choices := make([]map[string]any, len(p.Options))
	for i, o := range p.Options {
		choices[i] = map[string]any{"const": o.ID, "title": o.DisplayLabel()}
	}
	if p.MinSelections == 1 && p.MaxSelections == 1 {
		return map[string]any{"type": "string", "title": "Pick one", "oneOf": choices}
	}
	return map[string]any{
		"type": "array", "title": capitalize(p.SelectionRule()),
		"items":    map[string]any{"anyOf": choices},
		"minItems": p.MinSelections, "maxItems": p.MaxSelections,
	}
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// commentField is the host form's comment field: "comment", unless the
// approval's own form has a field of that name.
func commentField(p elicitation.Payload) string {
	if p.Schema != nil {
		if _, taken := p.Schema.Field(hostComment); taken {
			return hostCommentAlt
		}
	}
	return hostComment
}

// hostSubmission turns the host's answer into the submission the review
// page would have sent: the same rules then apply to it.
func hostSubmission(p elicitation.Payload, res *mcp.ElicitResult, nonce string) (elicitation.Submission, error) {
	sub := elicitation.Submission{ID: "host-" + nonce, Via: elicitation.ViaHostForm}
	switch res.Action {
	case "accept":
		sub.Decision = elicitation.DecisionSubmitted
	case "decline":
		sub.Decision = elicitation.DecisionDeclined
	default:
		return sub, badArg("inputResponses", "the host's answer has action %q; it must be accept, decline or cancel", res.Action)
	}
	content := res.Content
	cf := commentField(p)
	if c, ok := content[cf]; ok {
		text, isText := c.(string)
		if !isText {
			return sub, badArg("inputResponses", "the host form's %s must be text", cf)
		}
		sub.Comment = text
	}
	if sub.Decision == elicitation.DecisionDeclined {
		return sub, nil
	}
	if p.Options != nil {
		ids, err := pickedIDs(content[hostSelection])
		sub.SelectedIDs = ids
		return sub, err
	}
	if p.Schema == nil {
		return sub, nil
	}
	form, err := formValues(p.Schema, content, cf)
	sub.Form = form
	return sub, err
}

// pickedIDs reads the selection field: one id, or a list of ids.
func pickedIDs(v any) ([]string, error) {
	switch v := v.(type) {
	case nil:
		return []string{}, nil
	case string:
		return []string{v}, nil
	case []any:
		if ids, ok := stringsOf(v); ok {
			return ids, nil
		}
		return nil, badArg("inputResponses", "the host form's %s must list option ids", hostSelection)
	}
	return nil, badArg("inputResponses", "the host form's %s must be an option id or a list of them", hostSelection)
}

// formValues turns the host form's typed values into the text an HTML
// form posts, so that FormSchema.ParseForm applies the one set of rules.
// A value of the wrong JSON type is refused here, naming the field.
func formValues(schema *elicitation.FormSchema, content map[string]any, commentKey string) (map[string][]string, error) {
	out := make(map[string][]string, len(content))
	var errs []elicitation.FieldError
	for name, v := range content {
		if name == commentKey {
			continue
		}
		f, known := schema.Field(name)
		if !known {
			out[name] = []string{fmt.Sprint(v)} // ParseForm names it
			continue
		}
		vals, ok := fieldText(f.Type, v)
		if !ok {
			errs = append(errs, elicitation.FieldError{Field: name, Message: "has the wrong type of value"})
			continue
		}
		out[name] = vals
	}
	if len(errs) > 0 {
		return nil, &elicitation.FormError{Fields: errs}
	}
	return out, nil
}

// fieldText is one typed value as form text; ok is false for a value of
// the wrong JSON type.
func fieldText(t elicitation.FieldType, v any) ([]string, bool) {
	switch x := v.(type) {
	case string:
		return []string{x}, t != elicitation.FieldBoolean && t != elicitation.FieldNumber && t != elicitation.FieldInteger && t != elicitation.FieldMultiSelect
	case bool:
		return []string{strconv.FormatBool(x)}, t == elicitation.FieldBoolean
	case float64:
		return []string{strconv.FormatFloat(x, 'g', -1, 64)}, t == elicitation.FieldNumber || t == elicitation.FieldInteger
	case []any:
		vals, ok := stringsOf(x)
		return vals, ok && t == elicitation.FieldMultiSelect
	}
	return nil, false
}

// stringsOf is v's elements, where every one is a string.
func stringsOf(v []any) ([]string, bool) {
	out := make([]string, len(v))
	for i, x := range v {
		s, ok := x.(string)
		if !ok {
			return nil, false
		}
		out[i] = s
	}
	return out, true
}
