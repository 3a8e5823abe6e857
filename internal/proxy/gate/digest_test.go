package gate

import (
	"encoding/json"
	"errors"
	"testing"
)

func TestCanonical(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
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

func TestValidText(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		raw string
		ok  bool
	}{
		{`{"a":"plain"}`, true},
		{`{"a":"x\ud83d\ude00"}`, true},
		{`{"a":"x\uD83D\uDE00"}`, true},
		{`{"a":"x\\ud800"}`, true}, // an escaped backslash, then text
		{`{"a":"\u00e9\n\"\\"}`, true},
		{`{"a":"x\ud800"}`, false},
		{`{"a":"x\udbff"}`, false},
		{`{"a":"x\udc00"}`, false},
		{`{"a":"\ud800\ud800"}`, false},
		{`{"a":"\ud800\u0041"}`, false},
		{`{"\ud800":1}`, false},
		{`["\ud800"]`, false},
		{"{\"a\":\"\xff\"}", false},
	} {
		err := ValidText([]byte(tc.raw))
		if (err == nil) != tc.ok || (err != nil && !errors.Is(err, ErrInvalidText)) {
			t.Errorf("ValidText(%s) = %v, want ok %v", tc.raw, err, tc.ok)
		}
		if _, err := Digest(json.RawMessage(tc.raw)); (err == nil) != tc.ok {
			t.Errorf("Digest(%s) = %v, want ok %v", tc.raw, err, tc.ok)
		}
	}
}
