package gate

import (
	"encoding/json"
	"testing"
)

func TestCanonical(t *testing.T) {
	tests := []struct{ in, want string }{
		{``, `{}`},
		{`null`, `{}`},
		{` { "b" : 1, "a" : [ true, null, "x" ] } `, `{"a":[true,null,"x"],"b":1}`},
		{`{"n":1.0,"m":1e2,"k":-0.0,"f":0.1,"big":123456789012345678901234567890}`, `{"big":123456789012345678901234567890,"f":0.1,"k":0,"m":100,"n":1}`},
		{`{"html":"<a&b>","u":"\u00e9"}`, `{"html":"<a&b>","u":"é"}`},
		{`{"z":{"y":2,"x":1}}`, `{"z":{"x":1,"y":2}}`},
	}
	for _, tt := range tests {
		got, err := Canonical(json.RawMessage(tt.in))
		if err != nil || string(got) != tt.want {
			t.Errorf("Canonical(%s) = %s, %v; want %s", tt.in, got, err, tt.want)
		}
	}
	if _, err := Canonical(json.RawMessage(`{"a":`)); err == nil {
		t.Error("broken JSON: no error")
	}
}

func TestDigestBindsValuesNotSpelling(t *testing.T) {
	a, _ := Digest(json.RawMessage(`{"path":"/tmp/x","force":true,"n":1}`))
	b, _ := Digest(json.RawMessage(`{ "n": 1.0, "force": true, "path": "/tmp/x" }`))
	c, _ := Digest(json.RawMessage(`{"path":"/tmp/y","force":true,"n":1}`))
	d, _ := Digest(json.RawMessage(`{"path":"/tmp/x","force":true,"n":1,"extra":null}`))
	if a != b {
		t.Errorf("same arguments, other spelling: %s != %s", a, b)
	}
	if a == c || a == d {
		t.Errorf("changed arguments kept the digest %s", a)
	}
	if len(a) != len("sha256:")+64 || a[:7] != "sha256:" {
		t.Errorf("digest %q", a)
	}
}
