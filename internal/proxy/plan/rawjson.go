package plan

// JSON as the proxy received it: an Object edits a JSON object without
// disturbing it (members keep their order and their values their exact
// bytes, so that what the proxy passes on is what it received, plus only
// what it deliberately changed).

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// Member is one key and its raw value.
type Member struct {
	Key   string
	Value json.RawMessage
}

// Object is a JSON object's members in their original order.
type Object struct {
	Members []Member
}

// ErrNotObject is returned by ParseObject for JSON that is not an object.
var ErrNotObject = errors.New("not a JSON object")

// ParseObject splits a JSON object into its members. A duplicate key keeps
// its last value, as encoding/json does. The values are the exact bytes of
// data (sub-slices of it, without the white space around them).
func ParseObject(data []byte) (*Object, error) {
	if !json.Valid(data) {
		// Let encoding/json say what is wrong.
		var v any
		if err := json.Unmarshal(data, &v); err != nil {
			return nil, fmt.Errorf("parsing JSON object: %w", err)
		}
		return nil, errors.New("parsing JSON object: invalid JSON")
	}
	i := skipSpace(data, 0)
	if data[i] != '{' {
		return nil, ErrNotObject
	}
	obj := &Object{}
	i = skipSpace(data, i+1)
	if data[i] == '}' {
		return obj, nil
	}
	for {
		// data is valid JSON: a key string, a colon, a value, then a
		// comma or the closing brace.
		end := skipString(data, i)
		key, err := decodeKey(data[i:end])
		if err != nil {
			return nil, fmt.Errorf("parsing JSON object: %w", err)
		}
		i = skipSpace(data, end)
		i = skipSpace(data, i+1) // the colon
		vend := skipValue(data, i)
		obj.Set(key, json.RawMessage(data[i:vend:vend]))
		i = skipSpace(data, vend)
		if data[i] == '}' {
			return obj, nil
		}
		i = skipSpace(data, i+1) // the comma
	}
}

func skipSpace(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// skipString returns the index just past the string that starts at i.
func skipString(data []byte, i int) int {
	for i++; i < len(data); i++ {
		switch data[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return i
}

// skipValue returns the index just past the (valid) value that starts at i.
func skipValue(data []byte, i int) int {
	switch data[i] {
	case '"':
		return skipString(data, i)
	case '{', '[':
		depth := 0
		for ; i < len(data); i++ {
			switch data[i] {
			case '"':
				i = skipString(data, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return i
	default: // a number, true, false or null
		for ; i < len(data); i++ {
			switch data[i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return i
			}
		}
		return i
	}
}

func decodeKey(quoted []byte) (string, error) {
	if bytes.IndexByte(quoted, '\\') < 0 {
		return string(quoted[1 : len(quoted)-1]), nil
	}
	var key string
	err := json.Unmarshal(quoted, &key)
	return key, err
}

// Get returns the raw value of key.
func (o *Object) Get(key string) (json.RawMessage, bool) {
	for _, m := range o.Members {
		if m.Key == key {
			return m.Value, true
		}
	}
	return nil, false
}

// Set replaces the value of key in place, or appends the member.
func (o *Object) Set(key string, value json.RawMessage) {
	for i, m := range o.Members {
		if m.Key == key {
			o.Members[i].Value = value
			return
		}
	}
	o.Members = append(o.Members, Member{Key: key, Value: value})
}

// Delete removes key.
func (o *Object) Delete(key string) {
	for i, m := range o.Members {
		if m.Key == key {
			o.Members = append(o.Members[:i], o.Members[i+1:]...)
			return
		}
	}
}

// MarshalJSON writes the members in order with their raw values.
func (o *Object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o.Members {
		if i > 0 {
			b.WriteByte(',')
		}
		if plainKey(m.Key) {
			b.WriteByte('"')
			b.WriteString(m.Key)
			b.WriteByte('"')
		} else {
			k, err := Marshal(m.Key)
			if err != nil {
				return nil, err
			}
			b.Write(k)
		}
		b.WriteByte(':')
		b.Write(m.Value)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// plainKey reports whether key needs no escaping: no control character,
// quote or backslash. Other bytes are written as they are, so that a key
// as received (even one that is not UTF-8, which json.Valid lets pass)
// reaches the upstream unchanged rather than as U+FFFD.
func plainKey(key string) bool {
	for i := 0; i < len(key); i++ {
		if c := key[i]; c < 0x20 || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// Clone returns a copy of o whose members can be changed without changing
// o's; the values' bytes are shared, and never changed in place.
func (o *Object) Clone() *Object {
	if o == nil {
		return &Object{}
	}
	return &Object{Members: append([]Member(nil), o.Members...)}
}

// Marshal encodes v as compact JSON without HTML escaping (so "<", ">"
// and "&" in argument values reach the upstream and the client as they
// were typed) and without json.Encoder's trailing newline.
func Marshal(v any) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}
