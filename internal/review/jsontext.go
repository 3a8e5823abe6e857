package review

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
)

// readableJSON indents raw JSON for a person: two-space indents, and every
// \uXXXX escape of a printable character written as the character itself,
// so that "\u0026" reads "&" and "\u003c" reads "<" (Go's encoder, and so
// many agents, escape them for HTML's sake; the page escapes what it shows
// anyway). Escapes of control and invisible characters, quotes and
// backslashes stay as they are, so the text still reads as the same JSON.
func readableJSON(raw []byte) (string, error) {
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return "", err
	}
	return unescapePrintable(b.String()), nil
}

func unescapePrintable(s string) string {
	if !strings.Contains(s, `\u`) {
		return s
	}
	var out strings.Builder
	out.Grow(len(s))
	inString := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			inString = !inString
		case c == '\\' && inString && i+1 < len(s):
			if s[i+1] != 'u' {
				out.WriteByte(c)
				out.WriteByte(s[i+1])
				i++
				continue
			}
			if r, n := escapedRune(s[i:]); n > 0 {
				out.WriteRune(r)
				i += n - 1
				continue
			}
		}
		out.WriteByte(c)
	}
	return out.String()
}

// escapedRune decodes the \uXXXX escape (or surrogate pair) at the start of
// s and returns the rune and the escape's length, or n = 0 if it should be
// left as written.
func escapedRune(s string) (r rune, n int) {
	hex := func(s string) (rune, bool) {
		if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
			return 0, false
		}
		v, err := strconv.ParseUint(s[2:6], 16, 16)
		return rune(v), err == nil
	}
	r, ok := hex(s)
	if !ok {
		return 0, 0
	}
	n = 6
	if utf16.IsSurrogate(r) {
		lo, ok := hex(s[6:])
		if !ok {
			return 0, 0
		}
		r, n = utf16.DecodeRune(r, lo), 12
		if r == unicode.ReplacementChar {
			return 0, 0
		}
	}
	if r == '"' || r == '\\' || !unicode.IsPrint(r) {
		return 0, 0
	}
	return r, n
}
