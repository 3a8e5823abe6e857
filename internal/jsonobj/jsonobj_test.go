package jsonobj_test

import (
	"encoding/json"
	"maps"
	"strings"
	"testing"

	"github.com/mcp-elicitation/elicitation/internal/jsonobj"
)

// members is what Members made of b, the last value of a repeated key
// winning, as encoding/json's does for a map.
func members(b []byte) (map[string]json.RawMessage, bool) {
	m := map[string]json.RawMessage{}
	ok := jsonobj.Members(b, func(k, v []byte) { m[string(k)] = v })
	return m, ok
}

func TestMembersReadsWhatClientsSend(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   string
		want map[string]string
	}{
		{`{}`, map[string]string{}},
		{" \t\r\n{ }\n", map[string]string{}},
		{`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"elicit_status","arguments":{"elicitationId":"el_1"}}}`,
			map[string]string{"jsonrpc": `"2.0"`, "id": "7", "method": `"tools/call"`, "params": `{"name":"elicit_status","arguments":{"elicitationId":"el_1"}}`}},
		{`{ "a" : [1, -0.5e+3, 2E-1, true, false, null, "x\"\\\/\b\f\n\r\tz\u00e9"] , "b":{} ,"c":[]}`,
			map[string]string{"a": `[1, -0.5e+3, 2E-1, true, false, null, "x\"\\\/\b\f\n\r\tz\u00e9"]`, "b": "{}", "c": "[]"}},
		{`{"a":1,"a":2}`, map[string]string{"a": "2"}},
		{`{"message":"caf` + "\xc3\xa9 \xff" + `"}`, map[string]string{"message": `"caf` + "\xc3\xa9 \xff" + `"`}},
		{`{"deep":` + strings.Repeat("[", jsonobj.MaxDepth-1) + strings.Repeat("]", jsonobj.MaxDepth-1) + `}`,
			map[string]string{"deep": strings.Repeat("[", jsonobj.MaxDepth-1) + strings.Repeat("]", jsonobj.MaxDepth-1)}},
	} {
		got, ok := members([]byte(c.in))
		if !ok {
			t.Errorf("Members(%q) = false, want it read", c.in)
			continue
		}
		want := map[string]json.RawMessage{}
		for k, v := range c.want {
			want[k] = json.RawMessage(v)
		}
		if !maps.EqualFunc(got, want, func(a, b json.RawMessage) bool { return string(a) == string(b) }) {
			t.Errorf("Members(%q) = %q, want %q", c.in, got, want)
		}
	}
}

func TestMembersLeavesTheRestToEncodingJSON(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		``, `null`, `[]`, `"x"`, `{`, `{"a"}`, `{"a":}`, `{"a":1,}`, `{"a":1}{}`, `{"a":1} x`,
		`{"a":01}`, `{"a":1.}`, `{"a":.5}`, `{"a":1e}`, `{"a":-}`, `{"a":+1}`, `{"a":tru}`, `{"a":truex}`,
		`{"a":"x`, "{\"a\":\"\x01\"}", `{"a":"\x"}`, `{"a":"\u12g4"}`, `{"a":[1 2]}`, `{"a":{"b" 1}}`, `{"a":{1:2}}`,
		`{"a":[1,]}`, `{'a':1}`, `{a:1}`,
		// valid JSON Members does not read: encoding/json decodes these
		`{"\u0061":1}`, `{"caf` + "\xc3\xa9" + `":1}`, "{\"a\x7f\":1}",
		`{"deep":` + strings.Repeat("[", jsonobj.MaxDepth) + strings.Repeat("]", jsonobj.MaxDepth) + `}`,
	} {
		if got, ok := members([]byte(in)); ok {
			t.Errorf("Members(%q) = %q, true; want false", in, got)
		}
	}
}

func TestString(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in, want string
		ok       bool
	}{
		{`"tools/call"`, "tools/call", true},
		{`""`, "", true},
		{`"a\"b"`, "", false},
		{`null`, "", false},
		{`7`, "", false},
		{`"`, "", false},
		{`"caf` + "\xc3\xa9" + `"`, "caf\u00e9", true},
		{`"caf` + "\xff" + `"`, "", false},
	} {
		got, ok := jsonobj.String([]byte(c.in))
		if string(got) != c.want || ok != c.ok {
			t.Errorf("String(%q) = %q, %v; want %q, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

// FuzzMembersIsEncodingJSON: whatever Members reads, encoding/json reads
// the same (the same members, each value the same bytes), so a caller
// that falls back to encoding/json when Members reports false always gets
// encoding/json's answer.
func FuzzMembersIsEncodingJSON(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"a":1,"a":[2,{"b":null}]}`, `{"id":"x","method":"tools/call","params":{"name":"elicit_await"}}`,
		` {"s":"\u00e9\n","n":-1.5e3,"t":true,"f":false} `, `{"a":01}`, `{"\u0061":1}`, "{\"a\":\"\xff\"}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, ok := members(b)
		var want map[string]json.RawMessage
		err := json.Unmarshal(b, &want)
		if !ok {
			return
		}
		if err != nil {
			t.Fatalf("Members read %q, which encoding/json refuses: %v", b, err)
		}
		if !maps.EqualFunc(got, want, func(a, b json.RawMessage) bool { return string(a) == string(b) }) {
			t.Fatalf("Members(%q) = %q, encoding/json %q", b, got, want)
		}
	})
}
