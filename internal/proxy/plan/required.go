// Which required tool arguments are missing.
//
// The required fields of a tool are its input schema's "required" list in
// order, then the configured extra fields appended without duplicates. A field
// is missing when it is absent, null, a string of only white space, an empty
// list or an empty object; 0 and false are present.

package plan

import (
	"bytes"
	"encoding/json"
	"strings"
)

// RequiredFields returns schemaRequired in order followed by the configured fields
// that are not already in it.
func RequiredFields(schemaRequired, configured []string) []string {
	out := make([]string, 0, len(schemaRequired)+len(configured))
	seen := make(map[string]bool, cap(out))
	for _, list := range [][]string{schemaRequired, configured} {
		for _, f := range list {
			if !seen[f] {
				seen[f] = true
				out = append(out, f)
			}
		}
	}
	return out
}

// MissingFields returns the fields of required that args lacks, in order. A nil
// args is an empty argument object.
func MissingFields(args *Object, fields []string) []string {
	var missing []string
	for _, f := range fields {
		var v json.RawMessage
		ok := false
		if args != nil {
			v, ok = args.Get(f)
		}
		if !ok || IsBlank(v) {
			missing = append(missing, f)
		}
	}
	return missing
}

// IsBlank reports whether a present value counts as missing: null, a
// white-space-only string, an empty list or an empty object. Invalid JSON is
// not blank: the upstream decides what to make of it.
func IsBlank(v json.RawMessage) bool {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return true
	}
	switch v[0] {
	case 'n':
		return string(v) == "null"
	case '"':
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return false
		}
		return strings.TrimSpace(s) == ""
	case '[':
		var a []json.RawMessage
		if err := json.Unmarshal(v, &a); err != nil {
			return false
		}
		return len(a) == 0
	case '{':
		var o map[string]json.RawMessage
		if err := json.Unmarshal(v, &o); err != nil {
			return false
		}
		return len(o) == 0
	}
	return false
}
