package mcptools

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// FuzzHostSubmission checks how the host's answer to its own form becomes
// the submission the review page would have sent (hostSubmission, what
// submitHostAnswer submits): a refusal is an invalid_argument naming the
// answer, or a *FormError naming fields; an accepted answer is the host
// form's, with its decision and comment; and form values the schema
// accepts, sent back by a host as typed JSON, give the same values again.
func FuzzHostSubmission(f *testing.F) {
	const schema = `{"type":"object","properties":{"name":{"type":"string","minLength":2},"n":{"type":"integer","maximum":10},"r":{"type":"number"},"ok":{"type":"boolean"},"tags":{"type":"array","items":{"type":"string","enum":["a","b"]}},"comment":{"type":"string"}},"required":["name"]}`
	f.Add(schema, "accept", `{"name":"Ada","n":3,"r":0.5,"ok":true,"tags":["a"],"reviewerComment":"fine"}`, "n1")
	f.Add(schema, "accept", `{"name":1,"n":"3","ok":"yes","tags":"a"}`, "n2")
	f.Add(schema, "decline", `{"reviewerComment":"no"}`, "n3")
	f.Add("", "accept", `{"selection":["o1","o2"],"comment":"x"}`, "n4")
	f.Add("", "accept", `{"selection":7}`, "n5")
	f.Add(`{"type":"object","properties":{"d":{"type":"string","format":"date"}}}`, "accept", `{"d":"2026-02-30","x":null}`, "n6")
	f.Add("", "cancel", `{}`, "n7")
	f.Fuzz(func(t *testing.T, schema, action, content, nonce string) {
		var p elicitation.Payload
		if schema == "" {
			p = elicitation.Payload{Options: []elicitation.Option{{ID: "o1"}, {ID: "o2"}}, MinSelections: 1, MaxSelections: 2}
		} else {
			s, err := elicitation.ParseFormSchema(json.RawMessage(schema))
			if err != nil {
				return
			}
			p.Schema = s
		}
		var c map[string]any
		if json.Unmarshal([]byte(content), &c) != nil {
			return
		}
		sub, err := hostSubmission(p, &mcp.ElicitResult{Action: action, Content: c}, nonce)
		if err != nil {
			var fe *elicitation.FormError
			if elicitation.CodeOf(err) != elicitation.CodeInvalidArgument || !errors.As(err, &fe) && !strings.Contains(elicitation.PublicMessage(err), "host") {
				t.Fatalf("refusal %v is not an invalid_argument about the host's answer", err)
			}
			return
		}
		want := map[string]elicitation.Decision{"accept": elicitation.DecisionSubmitted, "decline": elicitation.DecisionDeclined}[action]
		if sub.Decision != want || want == "" || sub.ID != "host-"+nonce || sub.Via != elicitation.ViaHostForm {
			t.Fatalf("action %q gave %+v", action, sub)
		}
		if text, _ := c[commentField(p)].(string); sub.Comment != text {
			t.Fatalf("comment %q, the form's %q", sub.Comment, text)
		}
		if p.Schema == nil || sub.Decision != elicitation.DecisionSubmitted {
			return
		}
		vals, err := p.Schema.ParseForm(sub.Form)
		if err != nil {
			return
		}
		back := map[string]any{}
		for k, v := range vals {
			back[k] = hostTyped(v)
		}
		again, err := hostSubmission(p, &mcp.ElicitResult{Action: "accept", Content: back}, nonce)
		if err != nil {
			t.Fatalf("accepted values %v, sent back typed, refused: %v", back, err)
		}
		vals2, err := p.Schema.ParseForm(again.Form)
		if err != nil || !reflect.DeepEqual(vals, vals2) {
			t.Fatalf("values %#v came back as %#v, %v", vals, vals2, err)
		}
	})
}

// hostTyped is a parsed form value as a host sends it in JSON.
func hostTyped(v any) any {
	switch x := v.(type) {
	case int64:
		return float64(x)
	case []string:
		out := make([]any, len(x))
		for i, s := range x {
			out[i] = s
		}
		return out
	}
	return v
}
