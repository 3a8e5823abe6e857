package safeliquid

import (
	"errors"
	"strings"
	"testing"
)

// FuzzCompileRender checks that no template, however malformed, panics the
// engine, and that every render either succeeds within the bounds or fails
// with a *LimitError or *RenderError; Compile fails only with *CompileError.
func FuzzCompileRender(f *testing.F) {
	seeds := []string{
		typicalRow,
		`{{ option.label | upcase }}`,
		`{% for i in (1..10) %}{{ i }}{% cycle 'a','b' %}{% endfor %}`,
		`{% assign s = "ab" %}{% for i in (1..40) %}{% assign s = s | append: s %}{% endfor %}`,
		`{% capture x %}{{ x }}{{ x }}{% endcapture %}`,
		`{% include 'x' %}`,
		`{% if a %}{% elsif b %}{% else %}{% endif %}`,
		`{% case x %}{% when 1, 2 %}a{% else %}b{% endcase %}`,
		`{% tablerow i in (1..5) cols: 2 %}{{ i }}{% endtablerow %}`,
		`{{ "abc" | slice: -1, 9 }}{{ list | concat: list | json }}`,
		`{{ big | replace: "", "xx" }}`,
		`{% for k in option %}{{ k[0] }}{% endfor %}`,
		`{% raw %}{{ x }}{% endraw %}{% comment %}{% endcomment %}`,
		`{{ (1..n) | join }}{% for i in (1..n) reversed limit: 3 %}{% break %}{% endfor %}`,
		`{{`, `{%`, `{% for %}`, `{% endif %}`, `{{ a | }}`, `{{ a[ }}`,
	}
	for _, s := range seeds {
		f.Add(s)
	}
	lim := Limits{MaxOutputBytes: 64 << 10, MaxIterations: 2000, MaxStringBytes: 16 << 10, MaxTotalBytes: 1 << 20}
	e := New(lim)
	bindings := map[string]any{
		"option": map[string]any{"id": "a", "label": "<b>L</b>", "tags": []any{"x", "y"}},
		"list":   []any{1.0, "two", nil, map[string]any{"k": "v"}},
		"big":    strings.Repeat("z", 4000),
		"n":      1e9,
	}
	f.Fuzz(func(t *testing.T, src string) {
		tpl, err := e.Compile("fuzz", src)
		if err != nil {
			var ce *CompileError
			if !errors.As(err, &ce) {
				t.Fatalf("Compile error of type %T: %v", err, err)
			}
			return
		}
		out, err := tpl.Render(bindings)
		if err != nil {
			var le *LimitError
			var re *RenderError
			if !errors.As(err, &le) && !errors.As(err, &re) {
				t.Fatalf("Render error of type %T: %v", err, err)
			}
			if out != "" {
				t.Fatalf("output with error")
			}
			return
		}
		if len(out) > lim.MaxOutputBytes {
			t.Fatalf("output %d bytes over MaxOutputBytes", len(out))
		}
	})
}
