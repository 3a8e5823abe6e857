// Package jsonobj reads the members of a JSON object without decoding
// their values, for the hot paths that need a few members of a message
// the SDK decodes anyway (a session POST's method and tool name, a tool
// call's arguments by name).
//
// Members reads what a client ordinarily sends (keys of printable ASCII
// without escapes, any valid JSON values) and reports false for anything
// else: invalid JSON, a key with an escape or a byte outside printable
// ASCII, nesting deeper than MaxDepth. A caller then decodes with
// encoding/json, so that what it gets is always what encoding/json gives
// (FuzzMembersIsEncodingJSON holds the two together).
package jsonobj

import (
	"bytes"
	"unicode/utf8"
)

// MaxDepth is the deepest nesting of arrays and objects Members reads
// (the object itself is depth 1); deeper, it reports false.
const MaxDepth = 64

// Members calls f with each member of the JSON object b, in order: the
// key's characters and the value's JSON (a sub-slice of b, without the
// white space around it). It reports whether b is one JSON object it
// reads (white space around it allowed); when it reports false, f may
// have seen some members and the caller discards what it made of them.
func Members(b []byte, f func(key, value []byte)) bool {
	s := scanner{b: b}
	s.space()
	if !s.next('{') {
		return false
	}
	s.space()
	if s.next('}') {
		s.space()
		return s.i == len(b)
	}
	for {
		s.space()
		key, ok := s.key()
		if !ok {
			return false
		}
		s.space()
		if !s.next(':') {
			return false
		}
		s.space()
		start := s.i
		if !s.value(2) {
			return false
		}
		value := b[start:s.i]
		s.space()
		if s.next(',') {
			f(key, value)
			continue
		}
		if !s.next('}') {
			return false
		}
		s.space()
		if s.i != len(b) {
			return false
		}
		f(key, value)
		return true
	}
}

// String returns the characters of the JSON string value v when they are
// what encoding/json decodes: no escapes, valid UTF-8 (encoding/json
// replaces an invalid byte); ok is false otherwise (another type, an
// escape, an invalid byte).
func String(v []byte) (s []byte, ok bool) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return nil, false
	}
	s = v[1 : len(v)-1]
	if bytes.IndexByte(s, '\\') >= 0 || !utf8.Valid(s) {
		return nil, false
	}
	return s, true
}

type scanner struct {
	b []byte
	i int
}

func (s *scanner) next(c byte) bool {
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

func (s *scanner) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// key reads a key of printable ASCII without escapes.
func (s *scanner) key() ([]byte, bool) {
	if !s.next('"') {
		return nil, false
	}
	start := s.i
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			return s.b[start : s.i-1], true
		case c < 0x20 || c > 0x7e || c == '\\':
			return nil, false
		}
		s.i++
	}
	return nil, false
}

// value skips one JSON value at nesting depth d, checking it is valid.
func (s *scanner) value(d int) bool {
	if s.i >= len(s.b) {
		return false
	}
	switch c := s.b[s.i]; {
	case c == '"':
		return s.str()
	case c == '{':
		return d <= MaxDepth && s.object(d)
	case c == '[':
		return d <= MaxDepth && s.array(d)
	case c == '-' || (c >= '0' && c <= '9'):
		return s.number()
	default:
		return s.literal("true") || s.literal("false") || s.literal("null")
	}
}

func (s *scanner) object(d int) bool {
	s.i++ // '{'
	s.space()
	if s.next('}') {
		return true
	}
	for {
		s.space()
		if !s.str() {
			return false
		}
		s.space()
		if !s.next(':') {
			return false
		}
		s.space()
		if !s.value(d + 1) {
			return false
		}
		s.space()
		if s.next('}') {
			return true
		}
		if !s.next(',') {
			return false
		}
	}
}

func (s *scanner) array(d int) bool {
	s.i++ // '['
	s.space()
	if s.next(']') {
		return true
	}
	for {
		s.space()
		if !s.value(d + 1) {
			return false
		}
		s.space()
		if s.next(']') {
			return true
		}
		if !s.next(',') {
			return false
		}
	}
}

// str skips a string, checking its escapes and that it holds no control
// character (what encoding/json's scanner checks; it takes any other
// byte).
func (s *scanner) str() bool {
	if !s.next('"') {
		return false
	}
	for s.i < len(s.b) {
		c := s.b[s.i]
		s.i++
		switch {
		case c == '"':
			return true
		case c < 0x20:
			return false
		case c == '\\':
			if !s.escape() {
				return false
			}
		}
	}
	return false
}

func (s *scanner) escape() bool {
	if s.i >= len(s.b) {
		return false
	}
	c := s.b[s.i]
	s.i++
	switch c {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return true
	case 'u':
		if s.i+4 > len(s.b) {
			return false
		}
		for _, h := range s.b[s.i : s.i+4] {
			if !isHex(h) {
				return false
			}
		}
		s.i += 4
		return true
	}
	return false
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// number skips a number as JSON's grammar has it:
// -? (0 | [1-9][0-9]*) (.[0-9]+)? ([eE][+-]?[0-9]+)?
func (s *scanner) number() bool {
	s.next('-')
	switch {
	case s.next('0'):
	case s.i < len(s.b) && s.b[s.i] >= '1' && s.b[s.i] <= '9':
		s.digits()
	default:
		return false
	}
	if s.next('.') && !s.digits() {
		return false
	}
	if s.next('e') || s.next('E') {
		if !s.next('+') {
			s.next('-')
		}
		if !s.digits() {
			return false
		}
	}
	return true
}

// digits skips one or more digits; false if there is none.
func (s *scanner) digits() bool {
	start := s.i
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
	}
	return s.i > start
}

func (s *scanner) literal(l string) bool {
	if bytes.HasPrefix(s.b[s.i:], []byte(l)) {
		s.i += len(l)
		return true
	}
	return false
}
