package gate

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math"
	"math/big"
	"strconv"
	"strings"
	"testing"

	"github.com/mcp-elicitation/elicitation/internal/proxy/config"
)

// FuzzCanonical checks the argument digest an approval binds to, on the
// arguments an agent sends: a refusal is an error; accepted arguments give
// valid JSON that is its own canonical form, the digest is the SHA-256 of
// it, another spelling of the same JSON (indented) has the same digest,
// and every number is spelled as the exact big-number reading says
// (integers exactly, others as the shortest float64).
func FuzzCanonical(f *testing.F) {
	for _, s := range []string{``, `null`, ` { "b" : 1, "a" : [ true, null, "x" ] } `,
		`{"n":1.0,"m":1e2,"k":-0.0,"f":0.1,"big":123456789012345678901234567890}`, `{"html":"<a&b>","u":"\u00e9"}`,
		`{"z":{"y":2,"x":1}}`, `{"a":"x\ud800"}`, `{"a":1e400}`, `{"a":-0.000}`, `{"a":10.50}`, `[1,2]`, `"s"`, `{"a":1}{}`, `{"a":`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		c, err := Canonical(json.RawMessage(raw))
		if err != nil {
			if _, derr := Digest(json.RawMessage(raw)); derr == nil {
				t.Fatalf("Canonical refused %q (%v) but Digest accepted it", raw, err)
			}
			return
		}
		if !json.Valid(c) {
			t.Fatalf("canonical form %q is not JSON", c)
		}
		if again, err := Canonical(c); err != nil || !bytes.Equal(again, c) {
			t.Fatalf("canonical form %q is not its own: %q, %v", c, again, err)
		}
		d, err := Digest(json.RawMessage(raw))
		sum := sha256.Sum256(c)
		if err != nil || d != "sha256:"+hex.EncodeToString(sum[:]) {
			t.Fatalf("Digest = %q, %v; want the SHA-256 of %q", d, err, c)
		}
		var indented bytes.Buffer
		if json.Indent(&indented, []byte(raw), " ", "\t") == nil {
			if d2, err := Digest(indented.Bytes()); err != nil || d2 != d {
				t.Fatalf("indented %q: digest %q, %v; want %q", indented.Bytes(), d2, err, d)
			}
		}
		checkNumbers(t, c)
	})
}

// checkNumbers compares every number of the canonical form c with the
// reference reading: big.Rat for an integer, float64 for the rest.
func checkNumbers(t *testing.T, c []byte) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(c))
	dec.UseNumber()
	for {
		tok, err := dec.Token()
		if err != nil {
			return
		}
		n, ok := tok.(json.Number)
		if !ok || len(n) > 400 {
			continue
		}
		want := string(n)
		if !strings.ContainsAny(want, ".eE") {
			r, ok := new(big.Rat).SetString(want)
			if !ok {
				t.Fatalf("canonical number %q does not read", n)
			}
			want = r.Num().String()
		} else {
			f, err := strconv.ParseFloat(want, 64)
			if err != nil || math.IsInf(f, 0) {
				t.Fatalf("canonical number %q out of range", n)
			}
			want = strconv.FormatFloat(f, 'g', -1, 64)
		}
		if string(n) != want {
			t.Fatalf("canonical number %q, want %q", n, want)
		}
	}
}

// FuzzParseTool checks how the gate reads an upstream's tool listing and
// decides whether a call needs a human: a listing that is not a JSON
// object is refused; one that reads gives its own name, and Destructive
// follows the MCP defaults (no annotations, or no readOnlyHint and no
// destructiveHint false, may destroy); under confirm_destructive a
// destructive tool always needs confirmation, and a call is held for
// "always" regardless of its arguments.
func FuzzParseTool(f *testing.F) {
	for _, s := range []string{
		`{"name":"delete_file","annotations":{"destructiveHint":true},"inputSchema":{"type":"object","properties":{"path":{"type":"string"}}}}`,
		`{"name":"read","annotations":{"readOnlyHint":true}}`, `{"name":"w","annotations":{"destructiveHint":false}}`,
		`{"name":"x","annotations":null,"inputSchema":{"properties":null}}`, `{"name":1}`, `[]`, `null`, `{"annotations":{"readOnlyHint":"yes"}}`,
	} {
		f.Add(s, `{"path":"/tmp/x"}`)
	}
	f.Fuzz(func(t *testing.T, listing, args string) {
		tl, err := ParseTool(json.RawMessage(listing))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "reading the tool listing: ") {
				t.Fatalf("refusal %q does not say what it read", err)
			}
			return
		}
		var probe struct {
			Name string `json:"name"`
		}
		if json.Unmarshal([]byte(listing), &probe) != nil {
			t.Fatalf("listing %q accepted, but its name does not read", listing)
		}
		if tl.Name != probe.Name {
			t.Fatalf("name %q, listed %q", tl.Name, probe.Name)
		}
		a := tl.Annotations
		want := a == nil || (!a.ReadOnlyHint && (a.DestructiveHint == nil || *a.DestructiveHint))
		if tl.Destructive() != want {
			t.Fatalf("Destructive() = %v for annotations %+v", tl.Destructive(), a)
		}
		obj, err := object(json.RawMessage(args))
		if err != nil {
			return
		}
		if got := needsConfirmation(nil, true, tl, obj); (got == "destructive") != want || (got == "") == want {
			t.Fatalf("confirm_destructive, destructive %v: %q", want, got)
		}
		if got := needsConfirmation(&config.Confirm{Always: true}, false, tl, obj); got != "always" {
			t.Fatalf("confirm always: %q", got)
		}
	})
}
