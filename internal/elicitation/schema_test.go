package elicitation_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

const formSchema = `{
  "type": "object",
  "properties": {
    "name": {"type": "string", "title": "Name", "minLength": 2, "maxLength": 10},
    "email": {"type": "string", "format": "email"},
    "site": {"type": "string", "format": "uri"},
    "day": {"type": "string", "format": "date"},
    "at": {"type": "string", "format": "date-time"},
    "ratio": {"type": "number", "minimum": 0, "maximum": 1},
    "count": {"type": "integer", "minimum": 1, "maximum": 10, "default": 3},
    "agree": {"type": "boolean", "default": false},
    "color": {"type": "string", "enum": ["red", "green"], "enumNames": ["Red", "Green"]},
    "size": {"type": "string", "oneOf": [{"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}]},
    "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b", "c"]}, "minItems": 1, "maxItems": 2},
    "pets": {"type": "array", "items": {"anyOf": [{"const": "cat", "title": "Cat"}, {"const": "dog", "title": "Dog"}]}}
  },
  "required": ["name", "count", "tags"]
}`

func mustSchema(t testing.TB, raw string) *elicitation.FormSchema {
	t.Helper()
	s, err := elicitation.ParseFormSchema(json.RawMessage(raw))
	if err != nil {
		t.Fatalf("ParseFormSchema: %v", err)
	}
	return s
}

func TestParseFormSchema(t *testing.T) {
	t.Parallel()
	s := mustSchema(t, formSchema)
	var names []string
	for _, f := range s.Fields {
		names = append(names, f.Name+":"+string(f.Type))
	}
	want := "name:string email:string site:string day:string at:string ratio:number count:integer agree:boolean color:select size:select tags:multiselect pets:multiselect"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("fields in order:\n got %s\nwant %s", got, want)
	}
	color, _ := s.Field("color")
	if !reflect.DeepEqual(color.Choices, []elicitation.Choice{{Value: "red", Title: "Red"}, {Value: "green", Title: "Green"}}) {
		t.Errorf("color choices %+v", color.Choices)
	}
	size, _ := s.Field("size")
	if size.Choices[1] != (elicitation.Choice{Value: "l", Title: "Large"}) {
		t.Errorf("size choices %+v", size.Choices)
	}
	count, _ := s.Field("count")
	if !count.Required || count.Default != int64(3) {
		t.Errorf("count: required %v default %#v", count.Required, count.Default)
	}
	if name, _ := s.Field("name"); !name.Required || *name.MinLength != 2 {
		t.Errorf("name %+v", name)
	}
}

func TestParseFormSchemaRefuses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, schema, field string }{
		{"not an object", `[1]`, "requestedSchema"},
		{"wrong type", `{"type":"array","properties":{"a":{"type":"string"}}}`, "requestedSchema.type"},
		{"no properties", `{"type":"object"}`, "requestedSchema.properties"},
		{"empty properties", `{"type":"object","properties":{}}`, "requestedSchema.properties"},
		{"nested object", `{"type":"object","properties":{"o":{"type":"object"}}}`, "requestedSchema.properties.o.type"},
		{"array of objects", `{"type":"object","properties":{"l":{"type":"array","items":{"type":"object"}}}}`, "requestedSchema.properties.l.items.type"},
		{"array without enum", `{"type":"object","properties":{"l":{"type":"array","items":{"type":"string"}}}}`, "requestedSchema.properties.l.items"},
		{"unknown format", `{"type":"object","properties":{"a":{"type":"string","format":"ipv4"}}}`, "requestedSchema.properties.a.format"},
		{"pattern", `{"type":"object","properties":{"a":{"type":"string","pattern":"^x"}}}`, "requestedSchema.properties.a.pattern"},
		{"top-level keyword", `{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":false}`, "requestedSchema.additionalProperties"},
		{"required unknown", `{"type":"object","properties":{"a":{"type":"string"}},"required":["b"]}`, "requestedSchema.required"},
		{"required not list", `{"type":"object","properties":{"a":{"type":"string"}},"required":"a"}`, "requestedSchema.required"},
		{"min above max", `{"type":"object","properties":{"a":{"type":"number","minimum":5,"maximum":1}}}`, "requestedSchema.properties.a"},
		{"negative maxLength", `{"type":"object","properties":{"a":{"type":"string","maxLength":-1}}}`, "requestedSchema.properties.a.maxLength"},
		{"empty enum", `{"type":"object","properties":{"a":{"type":"string","enum":[]}}}`, "requestedSchema.properties.a.enum"},
		{"enumNames mismatch", `{"type":"object","properties":{"a":{"type":"string","enum":["x"],"enumNames":["X","Y"]}}}`, "requestedSchema.properties.a.enumNames"},
		{"oneOf without const", `{"type":"object","properties":{"a":{"type":"string","oneOf":[{"title":"X"}]}}}`, "requestedSchema.properties.a.oneOf[0]"},
		{"choice with a newline", `{"type":"object","properties":{"a":{"type":"string","enum":["x\ny"]}}}`, "requestedSchema.properties.a"},
		{"field name with a control character", `{"type":"object","properties":{"a\u0000":{"type":"string"}}}`, "requestedSchema.properties"},
		{"duplicate choice", `{"type":"object","properties":{"a":{"type":"string","enum":["x","x"]}}}`, "requestedSchema.properties.a"},
		{"bad default", `{"type":"object","properties":{"a":{"type":"integer","default":"x"}}}`, "requestedSchema.properties.a.default"},
		{"default out of range", `{"type":"object","properties":{"a":{"type":"integer","maximum":3,"default":4}}}`, "requestedSchema.properties.a.default"},
		{"default not a choice", `{"type":"object","properties":{"a":{"type":"string","enum":["x"],"default":"y"}}}`, "requestedSchema.properties.a.default"},
		{"duplicate key", `{"type":"object","properties":{"a":{"type":"string"},"a":{"type":"number"}}}`, "requestedSchema.properties"},
		{"no type", `{"type":"object","properties":{"a":{"title":"A"}}}`, "requestedSchema.properties.a"},
		{"trailing data", `{"type":"object","properties":{"a":{"type":"string"}}} {}`, "requestedSchema"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := elicitation.ParseFormSchema(json.RawMessage(tc.schema))
			checkErr(t, err, elicitation.ErrSchemaInvalid, tc.field)
		})
	}
}

func TestParseForm(t *testing.T) {
	t.Parallel()
	s := mustSchema(t, formSchema)
	base := func() map[string][]string {
		return map[string][]string{"name": {"Ada"}, "count": {"4"}, "tags": {"a"}}
	}
	for _, tc := range []struct {
		name   string
		mutate func(map[string][]string)
		want   map[string]any
		errs   map[string]string // field -> message substring
	}{
		{"minimal", func(map[string][]string) {}, map[string]any{"name": "Ada", "count": int64(4), "tags": []string{"a"}, "agree": false}, nil},
		{"everything", func(v map[string][]string) {
			v["email"] = []string{"ada@example.com"}
			v["site"] = []string{"https://example.com/x"}
			v["day"] = []string{"2026-02-28"}
			v["at"] = []string{"2026-02-28T09:30"}
			v["ratio"] = []string{"0.25"}
			v["agree"] = []string{"on"}
			v["color"] = []string{"green"}
			v["size"] = []string{"l"}
			v["tags"] = []string{"a", "c"}
			v["pets"] = []string{"dog"}
		}, map[string]any{
			"name": "Ada", "count": int64(4), "tags": []string{"a", "c"}, "email": "ada@example.com", "site": "https://example.com/x",
			"day": "2026-02-28", "at": "2026-02-28T09:30:00Z", "ratio": 0.25, "agree": true, "color": "green", "size": "l", "pets": []string{"dog"},
		}, nil},
		{"date-time with offset", func(v map[string][]string) { v["at"] = []string{"2026-02-28T09:30:00+02:00"} },
			map[string]any{"name": "Ada", "count": int64(4), "tags": []string{"a"}, "agree": false, "at": "2026-02-28T09:30:00+02:00"}, nil},
		{"empty optional fields are left out", func(v map[string][]string) { v["email"] = []string{""}; v["ratio"] = []string{" "} },
			map[string]any{"name": "Ada", "count": int64(4), "tags": []string{"a"}, "agree": false}, nil},
		{"missing required", func(v map[string][]string) { delete(v, "name"); v["count"] = []string{""}; delete(v, "tags") },
			nil, map[string]string{"name": "is required", "count": "is required", "tags": "is required"}},
		{"whitespace is not a value", func(v map[string][]string) { v["name"] = []string{"   "} }, nil, map[string]string{"name": "is required"}},
		{"wrong types", func(v map[string][]string) {
			v["count"] = []string{"four"}
			v["ratio"] = []string{"NaN"}
			v["agree"] = []string{"maybe"}
			v["email"] = []string{"Ada <ada@example.com>"}
			v["site"] = []string{"/relative"}
			v["day"] = []string{"28/02/2026"}
			v["at"] = []string{"tomorrow"}
		}, nil, map[string]string{
			"count": "must be a number", "ratio": "must be a number", "agree": "must be true or false", "email": "email address",
			"site": "absolute URI", "day": "date like", "at": "date and time like",
		}},
		{"integer must be whole", func(v map[string][]string) { v["count"] = []string{"2.5"} }, nil, map[string]string{"count": "whole number"}},
		{"bounds", func(v map[string][]string) {
			v["name"] = []string{"A"}
			v["count"] = []string{"11"}
			v["ratio"] = []string{"-0.1"}
			v["tags"] = []string{"a", "b", "c"}
		}, nil, map[string]string{"name": "at least 2 characters", "count": "at most 10", "ratio": "at least 0", "tags": "pick at most 2"}},
		{"length counts characters", func(v map[string][]string) { v["name"] = []string{"ÅÅÅÅÅÅÅÅÅÅ"} },
			map[string]any{"name": "ÅÅÅÅÅÅÅÅÅÅ", "count": int64(4), "tags": []string{"a"}, "agree": false}, nil},
		{"not a choice", func(v map[string][]string) { v["color"] = []string{"blue"}; v["tags"] = []string{"z"} },
			nil, map[string]string{"color": "one of the offered choices", "tags": "only hold the offered choices"}},
		{"duplicate choice", func(v map[string][]string) { v["tags"] = []string{"a", "a"} }, nil, map[string]string{"tags": "twice"}},
		{"sent twice", func(v map[string][]string) { v["name"] = []string{"Ada", "Bob"} }, nil, map[string]string{"name": "sent 2 times"}},
		{"unknown field", func(v map[string][]string) { v["admin"] = []string{"true"} }, nil, map[string]string{"admin": "not a field"}},
		{"invalid utf-8", func(v map[string][]string) { v["name"] = []string{"A\xff\xfe"} }, nil, map[string]string{"name": "not valid text"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := base()
			tc.mutate(v)
			got, err := s.ParseForm(v)
			if tc.errs == nil {
				if err != nil {
					t.Fatalf("ParseForm: %v", err)
				}
				if !reflect.DeepEqual(got, tc.want) {
					t.Fatalf("got  %#v\nwant %#v", got, tc.want)
				}
				return
			}
			var fe *elicitation.FormError
			if !errors.As(err, &fe) || !errors.Is(err, elicitation.ErrFormInvalid) || elicitation.CodeOf(err) != elicitation.CodeInvalidArgument {
				t.Fatalf("err = %v, want a *FormError", err)
			}
			gotErrs := map[string]string{}
			for _, f := range fe.Fields {
				gotErrs[f.Field] = f.Message
			}
			if len(gotErrs) != len(tc.errs) {
				t.Errorf("errors %v, want fields %v", gotErrs, tc.errs)
			}
			for f, want := range tc.errs {
				if !strings.Contains(gotErrs[f], want) {
					t.Errorf("%s: %q, want it to say %q", f, gotErrs[f], want)
				}
			}
		})
	}
}

// FuzzParseForm checks the form validation against arbitrary schemas and
// values: it never panics, it accepts only values that satisfy the schema,
// and what it accepts is stable (parsing its own output again gives the
// same values).
func FuzzParseForm(f *testing.F) {
	f.Add(formSchema, "name", "Ada", "count", "3")
	f.Add(formSchema, "tags", "a", "tags", "b")
	f.Add(`{"type":"object","properties":{"n":{"type":"number","minimum":-1e308}}}`, "n", "1e309", "n", "")
	f.Add(`{"type":"object","properties":{"d":{"type":"string","format":"date-time"}},"required":["d"]}`, "d", "2026-01-01T00:00", "x", "1")
	f.Add(`{"type":"object","properties":{"b":{"type":"boolean"},"i":{"type":"integer","maximum":9007199254740993}}}`, "b", "on", "i", "9007199254740993")
	f.Fuzz(func(t *testing.T, schema, k1, v1, k2, v2 string) {
		s, err := elicitation.ParseFormSchema(json.RawMessage(schema))
		if err != nil {
			if elicitation.CodeOf(err) != elicitation.CodeInvalidArgument {
				t.Fatalf("schema error without invalid_argument: %v", err)
			}
			return
		}
		vals := map[string][]string{k1: {v1}}
		vals[k2] = append(vals[k2], v2)
		got, err := s.ParseForm(vals)
		if err != nil {
			var fe *elicitation.FormError
			if !errors.As(err, &fe) || len(fe.Fields) == 0 {
				t.Fatalf("error is not a field-by-field *FormError: %v", err)
			}
			return
		}
		for name := range got {
			if _, ok := s.Field(name); !ok {
				t.Fatalf("accepted value for unknown field %q", name)
			}
		}
		for _, fl := range s.Fields {
			if _, ok := got[fl.Name]; fl.Required && !ok && fl.Type != elicitation.FieldBoolean {
				t.Fatalf("required field %q missing from accepted values", fl.Name)
			}
		}
		// Round trip: the accepted values, posted again as text, are accepted unchanged.
		again := map[string][]string{}
		for name, v := range got {
			switch v := v.(type) {
			case string:
				again[name] = []string{v}
			case bool:
				if v {
					again[name] = []string{"true"}
				}
			case int64:
				again[name] = []string{json.Number(strings.TrimSpace(mustJSON(v))).String()}
			case float64:
				again[name] = []string{mustJSON(v)}
			case []string:
				again[name] = v
			}
		}
		got2, err := s.ParseForm(again)
		if err != nil {
			t.Fatalf("accepted values refused on re-parse: %v (%#v)", err, again)
		}
		if !reflect.DeepEqual(got, got2) {
			t.Fatalf("re-parse changed values:\n%#v\n%#v", got, got2)
		}
	})
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
