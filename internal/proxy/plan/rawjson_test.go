package plan

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestRoundTripKeepsBytes(t *testing.T) {
	t.Parallel()
	in := `{"z": 1.50, "a":{"y":2,"b":[3, 4]} ,"n":12345678901234567890,"execution":{"taskSupport":"forbidden"}}`
	obj, err := ParseObject([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	out, err := obj.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"z":1.50,"a":{"y":2,"b":[3, 4]},"n":12345678901234567890,"execution":{"taskSupport":"forbidden"}}`
	if string(out) != want {
		t.Errorf("round trip:\n got %s\nwant %s", out, want)
	}
	obj.Set("<a&b>", json.RawMessage(`1`))
	obj.Delete("<a&b>")
	obj.Set("a", json.RawMessage(`"x"`))
	obj.Set("new", json.RawMessage(`true`))
	obj.Delete("z")
	out, _ = obj.MarshalJSON()
	if want := `{"a":"x","n":12345678901234567890,"execution":{"taskSupport":"forbidden"},"new":true}`; string(out) != want {
		t.Errorf("after edits:\n got %s\nwant %s", out, want)
	}
}

func TestParseObjectRefuses(t *testing.T) {
	t.Parallel()
	for _, in := range []string{`[]`, `null`, `"x"`, `{"a":1} {}`, `{"a":}`, ``} {
		if _, err := ParseObject([]byte(in)); err == nil {
			t.Errorf("ParseObject(%q) succeeded", in)
		}
	}
	if _, err := ParseObject([]byte(`[1]`)); !errors.Is(err, ErrNotObject) {
		t.Errorf("ParseObject([1]) = %v, want ErrNotObject", err)
	}
}

func TestKeysNotHTMLEscaped(t *testing.T) {
	t.Parallel()
	obj := &Object{}
	obj.Set("<a&b>", json.RawMessage(`"<x>"`))
	out, _ := obj.MarshalJSON()
	if string(out) != `{"<a&b>":"<x>"}` {
		t.Errorf("got %s", out)
	}
}

func TestParseObjectScanner(t *testing.T) {
	t.Parallel()
	in := " {\"a\\u0062\" : \"}{\\\"]\" , \"n\":-1.5e3,\"o\":{\"x\":[{\"}\":\"{\"}],\"y\":null},\"t\":true,\"a\\u0062\":[ ] } \n"
	obj, err := ParseObject([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range obj.Members {
		got = append(got, m.Key+"="+string(m.Value))
	}
	want := `ab=[ ]|n=-1.5e3|o={"x":[{"}":"{"}],"y":null}|t=true`
	if s := strings.Join(got, "|"); s != want {
		t.Errorf("members\n got %s\nwant %s", s, want)
	}
	obj, _ = ParseObject([]byte(`{}`))
	if len(obj.Members) != 0 {
		t.Errorf("empty object: %v", obj.Members)
	}
}
