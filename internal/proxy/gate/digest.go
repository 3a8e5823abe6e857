package gate

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
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
	var b bytes.Buffer
	if err := canon(&b, v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func canon(b *bytes.Buffer, v any) error {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case json.Number:
		s, err := canonNumber(string(x))
		if err != nil {
			return err
		}
		b.WriteString(s)
	case string:
		canonString(b, x)
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := canon(b, e); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			canonString(b, k)
			b.WriteByte(':')
			if err := canon(b, x[k]); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	default:
		return fmt.Errorf("canonical JSON: unexpected %T", v)
	}
	return nil
}

// canonNumber writes integers exactly (however large) and other numbers in
// the shortest form that reads back as the same float64.
func canonNumber(s string) (string, error) {
	if !strings.ContainsAny(s, "eE") {
		// No exponent: the value's size is bounded by its text.
		if r, ok := new(big.Rat).SetString(s); ok && r.IsInt() {
			return r.Num().String(), nil
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) {
		return "", fmt.Errorf("canonical JSON: number %q out of range", s)
	}
	if f == 0 {
		return "0", nil
	}
	return strconv.FormatFloat(f, 'g', -1, 64), nil
}

func canonString(b *bytes.Buffer, s string) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	b.Truncate(b.Len() - 1) // Encode's newline
}
