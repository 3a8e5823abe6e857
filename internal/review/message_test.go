package review

import (
	"strings"
	"testing"
)

func TestMessageHTML(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []string // fragments that must appear
		not      []string // fragments that must not
	}{
		{"plain text keeps its lines", "Deploy?\nReply by noon.", []string{"<p>Deploy?<br>\nReply by noon.</p>"}, nil},
		{"emphasis and code", "**api** _v1.3_ `migrate up`", []string{"<strong>api</strong>", "<em>v1.3</em>", "<code>migrate up</code>"}, nil},
		{"lists", "- a\n- b\n\n1. one\n2. two", []string{"<ul>\n<li>a</li>", "<ol>\n<li>one</li>"}, nil},
		{"fenced code", "```\n<b>x</b>\n```", []string{"<pre><code>&lt;b&gt;x&lt;/b&gt;\n</code></pre>"}, []string{"<b>"}},
		{"https link", "[PR](https://example.com/pr/7?a=1&b=2)", []string{`<a href="https://example.com/pr/7?a=1&amp;b=2" rel="nofollow noopener noreferrer" target="_blank">PR</a>`}, nil},
		{"http autolink", "<http://example.com/x>", []string{`<a href="http://example.com/x" rel="nofollow noopener noreferrer" target="_blank">http://example.com/x</a>`}, nil},
		{"javascript link keeps its text", "[click](javascript:alert(1))", []string{"<p>click</p>"}, []string{"<a", "javascript"}},
		{"data link", "[x](data:text/html,<script>alert(1)</script>)", nil, []string{"<a", "<script"}},
		{"relative link", "[x](/review/other/key)", []string{"<p>x</p>"}, []string{"<a"}},
		{"mail autolink", "<ops@example.com>", []string{"ops@example.com"}, []string{"<a", "mailto"}},
		{"image shows its alt text", "![a pixel](https://example.com/p.gif)", []string{"<p>a pixel</p>"}, []string{"<img", "p.gif"}},
		{"inline raw HTML is text", "a <b onclick=x>b</b> <img src=x onerror=alert(1)>", []string{"&lt;b onclick=x&gt;b&lt;/b&gt;", "&lt;img src=x onerror=alert(1)&gt;"}, []string{"<b", "<img"}},
		{"raw HTML block is text", "<div>\n<script>alert(1)</script>\n</div>", []string{`<p class="raw">&lt;div&gt;<br>`, "&lt;script&gt;alert(1)&lt;/script&gt;"}, []string{"<script", "<div"}},
		{"comment block", "<!-- hidden -->", []string{"&lt;!-- hidden --&gt;"}, []string{"<!--"}},
		{"heading is a bold paragraph", "# Title", []string{"<p><strong>Title</strong></p>"}, []string{"<h1"}},
		{"entities stay text", "&lt;script&gt; &amp;", []string{"&lt;script&gt; &amp;"}, []string{"<script"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := string(messageHTML(tc.in))
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("%q renders\n%s\nwithout %q", tc.in, got, w)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(got, n) {
					t.Errorf("%q renders\n%s\nwith %q", tc.in, got, n)
				}
			}
		})
	}
}

func TestReadableJSON(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"a":"x \u0026 y \u003cz\u003e"}`, "{\n  \"a\": \"x & y <z>\"\n}"},
		{`["\u00e9\ud83d\ude00"]`, "[\n  \"é😀\"\n]"},
		// Kept: quotes, backslashes, controls, invisible characters, lone surrogates.
		{`["\u0022 \u005c \u0000 \u200b \ud800 \\u0026"]`, "[\n  \"\\u0022 \\u005c \\u0000 \\u200b \\ud800 \\\\u0026\"\n]"},
		// Outside strings nothing changes; keys are unescaped too.
		{`{"k\u0026":1e3}`, "{\n  \"k&\": 1e3\n}"},
	} {
		got, err := readableJSON([]byte(tc.in))
		if err != nil || got != tc.want {
			t.Errorf("readableJSON(%s) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}
