// Package rawjson edits JSON objects without disturbing them: members keep
// their order and their values keep their exact bytes, so that what the proxy
// passes on is what it received, plus only what it deliberately changed.
package rawjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
// its last value, as encoding/json does.
func ParseObject(data []byte) (*Object, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("parsing JSON object: %w", err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, ErrNotObject
	}
	obj := &Object{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("parsing JSON object: %w", err)
		}
		key, ok := tok.(string)
		if !ok {
			return nil, fmt.Errorf("parsing JSON object: key is %T", tok)
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("parsing JSON object member %q: %w", key, err)
		}
		obj.Set(key, v)
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("parsing JSON object: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("parsing JSON object: trailing data")
	}
	return obj, nil
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
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	b.WriteByte('{')
	for i, m := range o.Members {
		if i > 0 {
			b.WriteByte(',')
		}
		if err := enc.Encode(m.Key); err != nil {
			return nil, err
		}
		b.Truncate(b.Len() - 1) // Encode's newline
		b.WriteByte(':')
		b.Write(m.Value)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}
