package safeliquid

import (
	"encoding/json"
	"fmt"
	"html"
	"math"
	"reflect"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/osteele/liquid/filters"
	"github.com/osteele/liquid/values"
)

// filterDict collects the library's standard filters by name.
type filterDict map[string]any

func (d filterDict) AddFilter(name string, fn any) { d[name] = fn }

// droppedFilters are standard filters of the library that this engine does
// not offer: "type" prints Go types, which no LiquidJS template expects.
var droppedFilters = []string{"type"}

// filterSet returns the engine's filters, every one wrapped so that it
// checks st's deadline before it runs, refuses a range or array argument
// longer than MaxIterations before it is expanded, and refuses a result over
// MaxStringBytes (or an array over MaxIterations), charging what it built to
// MaxTotalBytes. Filters whose result can be much larger than their inputs
// (join, replace, concat, json, …) are rewritten to check the size before
// building it.
func filterSet(st *renderState) map[string]any {
	d := filterDict{}
	filters.AddStandardFilters(d)
	for _, name := range droppedFilters {
		delete(d, name)
	}
	for name, fn := range boundedFilters(st) {
		d[name] = fn
	}
	out := make(map[string]any, len(d))
	for name, fn := range d {
		out[name] = wrapFilter(st, name, fn)
	}
	return out
}

func wrapFilter(st *renderState, name string, fn any) func(any, ...any) (any, error) {
	fv := reflect.ValueOf(fn)
	return func(in any, args ...any) (any, error) {
		n := dataSize(in)
		for _, a := range args {
			n += dataSize(a)
		}
		if err := st.stepData(n); err != nil {
			return nil, err
		}
		call := make([]any, 0, 1+len(args))
		in, err := st.checkArg(name, in)
		if err != nil {
			return nil, err
		}
		call = append(call, in)
		for _, a := range args {
			a, err := st.checkArg(name, a)
			if err != nil {
				return nil, err
			}
			call = append(call, a)
		}
		out, err := values.Call(fv, call)
		if st.err != nil {
			return nil, st.err
		}
		if err != nil {
			return nil, err
		}
		if err := st.checkResult(name, in, out); err != nil {
			return nil, err
		}
		return out, nil
	}
}

// dataSize is what a filter argument weighs in steps (see stepData): a
// string its bytes, an array 64 per element; anything else nothing.
func dataSize(v any) int {
	switch v := v.(type) {
	case string:
		return len(v)
	case []any:
		return 64 * len(v)
	case nil, bool, int, float64:
		return 0
	}
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Slice || rv.Kind() == reflect.Array {
		return 64 * rv.Len()
	}
	return 0
}

// checkArg refuses ranges that would expand past MaxIterations (the library
// turns a range into an array before calling a filter).
func (s *renderState) checkArg(name string, v any) (any, error) {
	if r, ok := v.(values.Range); ok {
		if r.Len() <= 0 {
			return []any{}, nil
		}
		if err := s.checkElems(name+" on a range", r.Len()); err != nil {
			return nil, err
		}
	}
	return v, nil
}

func (s *renderState) checkResult(name string, in, out any) error {
	switch o := out.(type) {
	case string:
		if err := s.checkString(name, len(o)); err != nil {
			return err
		}
		if is, ok := in.(string); ok && len(is) == len(o) && is == o {
			return nil // passed through, nothing built
		}
		return s.charge(len(o))
	case []byte:
		if err := s.checkString(name, len(o)); err != nil {
			return err
		}
		return s.charge(len(o))
	case nil:
		return nil
	}
	rv := reflect.ValueOf(out)
	if rv.Kind() == reflect.Slice {
		if err := s.checkElems(name, rv.Len()); err != nil {
			return err
		}
		return s.charge(16 * rv.Len())
	}
	return nil
}

// estimateSize estimates the bytes v reaches: string lengths plus a little
// per element (JSON escaping can make the printed form up to 6 times larger;
// callers check the built result again). It stops counting once it passes
// limit, so its cost is bounded by limit, not by v.
func estimateSize(v any, limit int) int {
	n := 0
	var walk func(v any, depth int)
	walk = func(v any, depth int) {
		if n > limit || depth > 10000 {
			n = limit + 1
			return
		}
		switch v := v.(type) {
		case nil:
			n += 4
		case string:
			n += len(v) + 2
		case map[string]any:
			n += 2
			for k, x := range v {
				n += len(k) + 4
				walk(x, depth+1)
				if n > limit {
					return
				}
			}
		case []any:
			n += 2
			for _, x := range v {
				n++
				walk(x, depth+1)
				if n > limit {
					return
				}
			}
		default:
			rv := reflect.ValueOf(v)
			switch rv.Kind() {
			case reflect.Slice, reflect.Array:
				for i := 0; i < rv.Len() && n <= limit; i++ {
					n++
					walk(rv.Index(i).Interface(), depth+1)
				}
			case reflect.Map:
				iter := rv.MapRange()
				for iter.Next() && n <= limit {
					n += 4
					walk(iter.Key().Interface(), depth+1)
					walk(iter.Value().Interface(), depth+1)
				}
			default:
				n += 32
			}
		}
	}
	walk(v, 0)
	return n
}

// boundedFilters are the filters this package implements itself, either to
// bound them or to fix library behaviour that panics or that LiquidJS
// templates would trip on.
func boundedFilters(st *renderState) map[string]any {
	return map[string]any{
		// Data arrive HTML-escaped, so escape must not escape them again.
		"escape": func(s string) string { return html.EscapeString(html.UnescapeString(s)) },

		"join":   st.join,
		"concat": st.concat,

		"replace": func(s, old, repl string) (string, error) {
			if err := st.checkString("replace", replacedLen(s, old, repl, -1)); err != nil {
				return "", err
			}
			return strings.ReplaceAll(s, old, repl), nil
		},
		"replace_first": func(s, old, repl string) (string, error) {
			if err := st.checkString("replace_first", replacedLen(s, old, repl, 1)); err != nil {
				return "", err
			}
			return strings.Replace(s, old, repl, 1), nil
		},
		"newline_to_br": func(s string) (string, error) {
			if err := st.checkString("newline_to_br", len(s)+5*strings.Count(s, "\n")); err != nil {
				return "", err
			}
			return strings.ReplaceAll(s, "\n", "<br />"), nil
		},

		"uniq": uniqFilter,

		"json":    func(v any) (string, error) { return jsonString(st, "json", v) },
		"inspect": func(v any) (string, error) { return jsonString(st, "inspect", v) },

		"slice":         sliceFilter,
		"truncate":      truncateFilter,
		"truncatewords": truncateWordsFilter,

		// LiquidJS filters that the library lacks.
		"where":    whereFilter,
		"at_least": func(a, b float64) float64 { return math.Max(a, b) },
		"at_most":  func(a, b float64) float64 { return math.Min(a, b) },
	}
}

// join is the join filter, bounded by MaxStringBytes as it builds.
func (st *renderState) join(a []any, sep func(string) string) (string, error) {
	maxStr := st.lim.MaxStringBytes
	s := sep(" ")
	var b strings.Builder
	first := true
	for _, v := range a {
		if v == nil {
			continue
		}
		if !first {
			b.WriteString(s)
		}
		first = false
		if str, ok := v.(string); ok {
			b.WriteString(str)
		} else {
			if estimateSize(v, maxStr) > maxStr {
				return "", st.checkString("join", maxStr+1)
			}
			fmt.Fprint(&b, v)
		}
		if b.Len() > maxStr {
			return "", st.checkString("join", b.Len())
		}
	}
	return b.String(), nil
}

// concat is the concat filter, charged for the data its result reaches.
func (st *renderState) concat(a, b []any) ([]any, error) {
	if err := st.checkElems("concat", len(a)+len(b)); err != nil {
		return nil, err
	}
	out := make([]any, 0, len(a)+len(b))
	out = append(append(out, a...), b...)
	// concat can repeat references (a | concat: a); count the data
	// the result reaches, not just its length.
	remaining := st.lim.MaxTotalBytes - int(st.built)
	if err := st.charge(min(estimateSize(out, remaining), remaining+1)); err != nil {
		return nil, err
	}
	return out, nil
}

// uniqFilter is uniq over any items, maps and lists compared by their JSON.
func uniqFilter(a []any) []any {
	seen := make(map[any]bool, len(a))
	var out []any
	for _, item := range a {
		key := item
		if item != nil && !reflect.TypeOf(item).Comparable() {
			b, _ := json.Marshal(item)
			key = "\x00json:" + string(b)
		}
		if !seen[key] {
			seen[key] = true
			out = append(out, item)
		}
	}
	return out
}

// sliceFilter is slice over strings (by rune) and lists, clamped to the
// value's bounds.
func sliceFilter(v any, start int, length func(int) int) (any, error) {
	n := length(1)
	switch v := v.(type) {
	case nil:
		return nil, nil
	case string:
		rs := []rune(v)
		b, e := sliceBounds(len(rs), start, n)
		return string(rs[b:e]), nil
	}
	a, err := values.Convert(v, reflect.TypeOf([]any{}))
	if err != nil {
		return nil, err
	}
	arr := a.([]any)
	b, e := sliceBounds(len(arr), start, n)
	return arr[b:e], nil
}

func truncateFilter(s string, length func(int) int, ellipsis func(string) string) string {
	n, el := length(50), ellipsis("...")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	keep := max(n-utf8.RuneCountInString(el), 0)
	rs := []rune(s)
	return string(rs[:keep]) + el
}

func truncateWordsFilter(s string, length func(int) int, ellipsis func(string) string) string {
	n, el := max(length(15), 1), ellipsis("...")
	words := strings.Fields(s)
	if len(words) <= n {
		return s
	}
	return strings.Join(words[:n], " ") + el
}

// whereFilter is LiquidJS's where: the items whose prop is truthy, or equal
// to want.
func whereFilter(a []any, prop string, want ...any) []any {
	key := values.ValueOf(prop)
	out := []any{}
	for _, item := range a {
		v := values.ValueOf(item).PropertyValue(key).Interface()
		if len(want) == 0 {
			if v != nil && v != false {
				out = append(out, item)
			}
		} else if values.Equal(v, want[0]) {
			out = append(out, item)
		}
	}
	return out
}

func jsonString(st *renderState, name string, v any) (string, error) {
	if estimateSize(v, st.lim.MaxStringBytes) > st.lim.MaxStringBytes {
		return "", st.checkString(name, st.lim.MaxStringBytes+1)
	}
	if t, ok := v.(time.Time); ok {
		v = t.Format(time.RFC3339)
	}
	b, err := json.Marshal(v) // escapes <, > and & as \u003c, \u003e, \u0026
	if err != nil {
		return fmt.Sprintf("%q", fmt.Sprint(v)), nil
	}
	if err := st.checkString(name, len(b)); err != nil {
		return "", err
	}
	return string(b), nil
}

// replacedLen is len(strings.Replace(s, old, repl, n)) without building it.
func replacedLen(s, old, repl string, n int) int {
	var count int
	if old == "" {
		count = utf8.RuneCountInString(s) + 1
	} else {
		count = strings.Count(s, old)
	}
	if n >= 0 && count > n {
		count = n
	}
	return len(s) + count*(len(repl)-len(old))
}

// sliceBounds clamps Liquid's slice(start, length) to [0, n]; a negative
// start counts from the end.
func sliceBounds(n, start, length int) (int, int) {
	if start < 0 {
		start += n
	}
	start = min(max(start, 0), n)
	if length < 0 {
		length = 0
	}
	end := n
	if length < n-start {
		end = start + length
	}
	return start, end
}
