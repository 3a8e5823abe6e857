package plan

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

func TestFields(t *testing.T) {
	t.Parallel()
	tests := []struct {
		schema, configured, want []string
	}{
		{nil, nil, []string{}},
		{[]string{"b", "a"}, nil, []string{"b", "a"}},
		{[]string{"b", "a"}, []string{"a", "c", "b", "d"}, []string{"b", "a", "c", "d"}},
		{nil, []string{"x", "x"}, []string{"x"}},
	}
	for _, tt := range tests {
		if got := RequiredFields(tt.schema, tt.configured); !slices.Equal(got, tt.want) {
			t.Errorf("RequiredFields(%q, %q) = %q, want %q", tt.schema, tt.configured, got, tt.want)
		}
	}
}

func TestMissing(t *testing.T) {
	t.Parallel()
	fields := []string{"a", "b", "c"}
	tests := []struct {
		args string
		want []string
	}{
		{`{}`, []string{"a", "b", "c"}},
		{`{"a":1,"b":"x","c":true}`, nil},
		{`{"a":0,"b":false,"c":-0.0}`, nil},
		{`{"a":null,"b":"  \t\n","c":"\u00a0"}`, []string{"a", "b", "c"}},
		{`{"a":[],"b":{},"c":[ ]}`, []string{"a", "b", "c"}},
		{`{"a":[null],"b":{"k":null},"c":" x "}`, nil},
		{`{"b":"0","other":""}`, []string{"a", "c"}},
	}
	for _, tt := range tests {
		obj, err := ParseObject([]byte(tt.args))
		if err != nil {
			t.Fatal(err)
		}
		if got := MissingFields(obj, fields); !slices.Equal(got, tt.want) {
			t.Errorf("MissingFields(%s) = %q, want %q", tt.args, got, tt.want)
		}
	}
	if got := MissingFields(nil, fields); !slices.Equal(got, fields) {
		t.Errorf("MissingFields(nil) = %q", got)
	}
}

// FuzzMissing checks the missing-field rule against an independent
// formulation on decoded values, and that merging a value for every missing
// field leaves nothing missing while keeping the other members' bytes.
func FuzzMissing(f *testing.F) {
	for _, s := range []string{
		`{"a":1}`, `{"a":null,"b":""}`, `{"a":"  ","b":[],"c":{}}`, `{"a":0,"b":false}`,
		`{"a":"\u2003","b":[[]],"c":{"":0}}`, `{"a":1e400}`, `{"a":"x","a":""}`, `[]`, `null`, `{"b":"\ud800"}`,
	} {
		f.Add([]byte(s), "a,b,c")
	}
	f.Fuzz(func(t *testing.T, data []byte, list string) {
		fields := RequiredFields(strings.Split(list, ","), nil)
		obj, err := ParseObject(data)
		if err != nil {
			return
		}
		var decoded map[string]any
		if err := json.Unmarshal(data, &decoded); err != nil {
			return
		}
		missing := MissingFields(obj, fields)
		for _, fld := range fields {
			v, present := decoded[fld]
			want := !present || v == nil
			switch x := v.(type) {
			case string:
				want = strings.TrimSpace(x) == ""
			case []any:
				want = len(x) == 0
			case map[string]any:
				want = len(x) == 0
			}
			if got := slices.Contains(missing, fld); got != want {
				t.Fatalf("field %q of %s: missing=%v, want %v", fld, data, got, want)
			}
		}
		before := map[string]string{}
		for _, m := range obj.Members {
			before[m.Key] = string(m.Value)
		}
		for _, fld := range missing {
			obj.Set(fld, json.RawMessage(`"filled"`))
		}
		if again := MissingFields(obj, fields); len(again) != 0 {
			t.Fatalf("still missing after merge: %q", again)
		}
		merged, err := obj.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		back, err := ParseObject(merged)
		if err != nil {
			t.Fatalf("merged object %s does not parse: %v", merged, err)
		}
		for k, v := range before {
			if slices.Contains(missing, k) {
				continue
			}
			if got, _ := back.Get(k); string(got) != v {
				t.Fatalf("member %q changed from %s to %s", k, v, got)
			}
		}
	})
}
