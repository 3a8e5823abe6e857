package safeliquid

import (
	"encoding/json"
	"fmt"
	"html"
	"reflect"
	"time"
)

// Escape returns a deep copy of v with every string leaf HTML-escaped
// (html.EscapeString: <, >, &, ' and "). Map keys are copied verbatim so
// that templates can still look values up by key; a for loop over a map
// escapes the keys it yields. Numbers, booleans, nil, time.Time and
// json.Number are returned as they are; any other value (a struct, a
// pointer) is formatted with fmt.Sprint and escaped, so no value reaches a
// template unescaped.
func Escape(v any) any { return escapeDepth(v, 0) }

// maxEscapeDepth stops Escape on self-referencing values (JSON decoding
// itself stops at 10000 levels); deeper values become nil.
const maxEscapeDepth = 10000

func escapeDepth(v any, depth int) any {
	if depth > maxEscapeDepth {
		return nil
	}
	depth++
	switch v := v.(type) {
	case nil, bool, float64, float32, int, int8, int16, int32, int64,
		uint, uint8, uint16, uint32, uint64, json.Number, time.Time:
		return v
	case string:
		return html.EscapeString(v)
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = escapeDepth(x, depth)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = escapeDepth(x, depth)
		}
		return out
	case []string:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = html.EscapeString(x)
		}
		return out
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Slice, reflect.Array:
		if rv.Type().Elem().Kind() == reflect.Uint8 { // []byte: text
			return html.EscapeString(fmt.Sprintf("%s", v))
		}
		out := make([]any, rv.Len())
		for i := range out {
			out[i] = escapeDepth(rv.Index(i).Interface(), depth)
		}
		return out
	case reflect.Map:
		if rv.Type().Key().Kind() == reflect.String {
			out := make(map[string]any, rv.Len())
			iter := rv.MapRange()
			for iter.Next() {
				out[iter.Key().String()] = escapeDepth(iter.Value().Interface(), depth)
			}
			return out
		}
	case reflect.String: // named string types
		return html.EscapeString(rv.String())
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return v
	case reflect.Pointer, reflect.Interface:
		if rv.IsNil() {
			return nil
		}
		return escapeDepth(rv.Elem().Interface(), depth)
	}
	return html.EscapeString(fmt.Sprint(v))
}
