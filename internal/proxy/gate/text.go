package gate

import (
	"errors"
	"fmt"
	"unicode/utf8"
)

// ErrInvalidText is the error for arguments whose strings are not text: a
// UTF-16 surrogate escape without its pair (\ud800 alone), or bytes that
// are not UTF-8. Decoders disagree on such input (Go's turns each into
// U+FFFD, a JavaScript upstream keeps the lone surrogate), so no digest
// can bind an approval to what the upstream would receive.
var ErrInvalidText = errors.New("the arguments hold a string that is not valid text")

// ValidText reports, with ErrInvalidText, a lone surrogate escape or a
// byte sequence that is not UTF-8 anywhere in a raw JSON value (keys and
// values alike). It reads the text as JSON's grammar does: an escape
// starts with a backslash inside a string.
func ValidText(raw []byte) error {
	if !utf8.Valid(raw) {
		return fmt.Errorf("%w: it is not UTF-8", ErrInvalidText)
	}
	inString := false
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; {
		case !inString:
			inString = c == '"'
		case c == '"':
			inString = false
		case c == '\\' && i+1 < len(raw):
			i++
			if raw[i] != 'u' {
				continue
			}
			r, ok := hex4(raw, i+1)
			if !ok {
				continue // malformed JSON: the parser's error
			}
			i += 4
			switch {
			case r >= 0xdc00 && r <= 0xdfff:
				return fmt.Errorf("%w: a low surrogate escape (\\u%04x) without a high one before it", ErrInvalidText, r)
			case r >= 0xd800 && r <= 0xdbff:
				lo, ok := rune(0), i+6 < len(raw) && raw[i+1] == '\\' && raw[i+2] == 'u'
				if ok {
					lo, ok = hex4(raw, i+3)
				}
				if !ok || lo < 0xdc00 || lo > 0xdfff {
					return fmt.Errorf("%w: a high surrogate escape (\\u%04x) without a low one after it", ErrInvalidText, r)
				}
				i += 6
			}
		}
	}
	return nil
}

// hex4 reads four hex digits at raw[at:].
func hex4(raw []byte, at int) (rune, bool) {
	if at+4 > len(raw) {
		return 0, false
	}
	var r rune
	for _, c := range raw[at : at+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}
