package gate

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/mcp-elicitation/elicitation/internal/proxy/plan"
)

// Digest is the argument digest an approval binds to: "sha256:" and the hex
// SHA-256 of the arguments' canonical JSON. Two argument objects that differ
// only in key order, white space or number spelling (1, 1.0, 1e0) have the
// same digest; any other change gives another.
func Digest(args json.RawMessage) (string, error) {
	c, err := Canonical(args)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(c)
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

// Canonical re-encodes a JSON value canonically: object keys sorted by their
// UTF-16 code units' order as RFC 8785 does (for the keys tools use, plain
// byte order), no insignificant white space, strings escaped minimally,
// numbers in their shortest form. Absent or null arguments are {}. Strings
// that are not valid text give ErrInvalidText: their digest could not say
// what the upstream receives.
func Canonical(raw json.RawMessage) ([]byte, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return []byte("{}"), nil
	}
	// What the decoder below would change (lone surrogates, bytes that are
	// not UTF-8) is refused rather than digested as something else.
	if err := ValidText(raw); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("arguments are not JSON: %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("arguments are not one JSON value")
	}
	v, err := canonNumbers(v)
	if err != nil {
		return nil, err
	}
	return plan.Marshal(v)
}

// canonNumbers replaces every number in v with its canonical spelling
// (canonNumber). encoding/json writes the rest canonically: object keys
// sorted, no white space, strings escaped minimally (plan.Marshal, without
// HTML escaping).
func canonNumbers(v any) (any, error) {
	var err error
	switch x := v.(type) {
	case json.Number:
		s, err := canonNumber(string(x))
		return json.Number(s), err
	case []any:
		for i := range x {
			if x[i], err = canonNumbers(x[i]); err != nil {
				return nil, err
			}
		}
	case map[string]any:
		for k := range x {
			if x[k], err = canonNumbers(x[k]); err != nil {
				return nil, err
			}
		}
	}
	return v, nil
}

// canonNumber writes integers exactly (however large) and other numbers in
// the shortest form that reads back as the same float64. s is a JSON
// number (no leading zeros, no "+"), so an integer written without an
// exponent is its own canonical form once a fraction of zeros is dropped
// and -0 is 0: read as text, in time linear in its length (a conversion
// to a big integer and back took seconds for a number of a megabyte).
func canonNumber(s string) (string, error) {
	if !strings.ContainsAny(s, "eE") {
		if whole, frac, _ := strings.Cut(s, "."); strings.Trim(frac, "0") == "" {
			if whole == "-0" {
				return "0", nil
			}
			return whole, nil
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) {
		if len(s) > 40 { // the agent's own value, which may be a megabyte
			s = fmt.Sprintf("%.20s… (%d bytes)", s, len(s))
		}
		return "", fmt.Errorf("canonical JSON: number %q out of range", s)
	}
	if f == 0 {
		return "0", nil
	}
	return strconv.FormatFloat(f, 'g', -1, 64), nil
}
