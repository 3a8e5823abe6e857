package review

import (
	"bytes"
	_ "embed"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/templates"
)

// Frame documents. Every piece of template output is shown only inside an
// <iframe sandbox="" srcdoc=…> (no allow-scripts, no allow-same-origin:
// an opaque origin where scripts, forms, popups, top navigation and
// automatic features such as meta refresh are off). The page's CSP is
// inherited by the frames; see csp.

// RowHeight is the height, in CSS pixels, of one row of a templated
// selection: the native control beside it and its slice of the rows frame
// are both exactly this tall, so that they line up without script.
const RowHeight = 72

var frameCSS = mustRead("frame.css")

func mustRead(name string) string {
	b, err := templates.FS.ReadFile(name)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// frameDoc is a standalone frame document: the base style, the agent's css
// (inert text in a <style> element), then body. <base target="_blank">
// makes a link in the frame try to open a new window, which the sandbox
// blocks (no allow-popups), so a click leaves the frame as it is.
func frameDoc(agentCSS, guard, body string) string {
	var b strings.Builder
	b.Grow(len(frameCSS) + len(agentCSS) + len(guard) + len(body) + 256)
	b.WriteString(`<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="referrer" content="no-referrer"><meta name="color-scheme" content="light dark"><base target="_blank"><style>`)
	b.WriteString(frameCSS)
	b.WriteString(`</style>`)
	if guard != "" {
		b.WriteString(`<style>`)
		b.WriteString(guard)
		b.WriteString(`</style>`)
	}
	if agentCSS != "" {
		b.WriteString(`<style>`)
		b.WriteString(styleText(agentCSS))
		b.WriteString(`</style>`)
	}
	b.WriteString(`</head><body>`)
	b.WriteString(body)
	b.WriteString(`</body></html>`)
	return b.String()
}

var styleEnd = regexp.MustCompile(`(?i)</(style)`)

// styleText keeps css inside its <style> element: an end tag in the text
// would close it early (harmless in the sandbox, but the css would then
// leak into the frame's markup).
func styleText(css string) string { return styleEnd.ReplaceAllString(css, `<\/$1`) }

// rowsGuard pins the geometry of the rows frame so that row i always
// occupies [i*RowHeight, (i+1)*RowHeight), beside control i. It is an
// anonymous cascade layer declared before the agent's css: for !important
// declarations the earliest layer wins over later layers and over unlayered
// rules, and an anonymous layer cannot be named (so the agent's css can
// neither add to it nor outrank it). The rows also get contain:strict, so
// positioned content (even position:fixed) stays inside its own row.
var rowsGuard = `@layer{` +
	`html,body{all:unset!important;display:block!important;margin:0!important;padding:0!important;border:0!important;overflow:hidden!important;height:auto!important;color-scheme:light dark!important;color:CanvasText!important;font:16px/1.35 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif!important}` +
	`head,head *{display:none!important}` +
	`html::before,html::after,body::before,body::after,body>.r::before,body>.r::after{content:none!important;display:none!important}` +
	`body>.r{all:unset!important;display:block!important;box-sizing:border-box!important;height:` + strconv.Itoa(RowHeight) + `px!important;width:100%!important;margin:0!important;padding:6px 10px!important;border:0!important;border-bottom:1px solid rgba(128,128,128,.45)!important;overflow:hidden!important;contain:strict!important;position:relative!important;overflow-wrap:break-word!important}` +
	`}`

// rowsDoc puts every row's output into one frame document, one fixed-height
// row each, in option order. Each row's markup is parsed as a fragment and
// serialized again, so that unbalanced or stray tags stay inside their row.
func rowsDoc(agentCSS string, rows []string) string {
	var body strings.Builder
	for i, r := range rows {
		body.WriteString(`<div class="r" id="r`)
		body.WriteString(strconv.Itoa(i))
		body.WriteString(`">`)
		body.WriteString(balance(r))
		body.WriteString(`</div>`)
	}
	return frameDoc(agentCSS, rowsGuard, body.String())
}

// topLayerAttrs open an element in the top layer without script.
var topLayerAttrs = map[string]bool{
	"popover": true, "popovertarget": true, "popovertargetaction": true,
	"commandfor": true, "command": true,
	"interestfor": true, "interesttarget": true,
}

var divContext = &html.Node{Type: html.ElementNode, Data: "div", DataAtom: atom.Div}

// balance parses s as the content of a <div> and serializes it again: every
// element is closed, stray end tags are dropped, nothing can close the
// row around it, and nothing opens in the top layer (defuse). Every
// template's output goes through it before it reaches a frame. It parses as the sandboxed frame does, with scripting off
// (so <noscript> holds markup, not text).
func balance(s string) string {
	if s == "" {
		return ""
	}
	nodes, err := html.ParseFragmentWithOptions(strings.NewReader(s), divContext, html.ParseOptionEnableScripting(false))
	if err != nil {
		return html.EscapeString(s)
	}
	var b bytes.Buffer
	for _, n := range nodes {
		defuse(n)
		if err := html.Render(&b, n); err != nil {
			return html.EscapeString(s)
		}
	}
	return b.String()
}

// defuse renames the two HTML elements whose serialization would not stay
// balanced in the frame: <plaintext> (no end tag: everything after it, the
// other rows included, would become its text) and <noscript> (html.Render
// writes its text unescaped, which the frame, without scripting, parses as
// markup that can close the row). It also drops the attributes that open
// an element in the frame's top layer without script (popover with its
// popovertarget buttons, invoker commands such as show-modal, interest
// invokers): the top layer ignores containment, so an element there would
// draw over the other rows; the element stays, as ordinary content.
func defuse(n *html.Node) {
	if n.Type == html.ElementNode {
		if n.Namespace == "" {
			switch n.DataAtom {
			case atom.Plaintext:
				n.Data, n.DataAtom = "pre", atom.Pre
			case atom.Noscript:
				n.Data, n.DataAtom = "span", atom.Span
			}
		}
		n.Attr = slices.DeleteFunc(n.Attr, func(a html.Attribute) bool { return topLayerAttrs[strings.ToLower(a.Key)] })
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		defuse(c)
	}
}

// frameHeight picks a height in CSS pixels for a frame showing markup,
// without script: an estimate from the number of block-level elements and
// the length of the text, clamped to [lo, hi]. Content beyond it scrolls
// inside the frame.
func frameHeight(markup string, lo, hi int) int {
	lower := strings.ToLower(markup)
	lines := 0
	for _, tag := range []string{"<br", "<p", "<li", "<tr", "<div", "<img", "<dt", "<dd", "<pre", "<blockquote"} {
		lines += strings.Count(lower, tag)
	}
	// Headings are larger and wrap sooner on a phone.
	lines += 3 * (strings.Count(lower, "<h1") + strings.Count(lower, "<h2") + strings.Count(lower, "<h3"))
	text := len(stripTags.ReplaceAllString(markup, ""))
	lines += text / 30
	lines += strings.Count(lower, "<img") * 3
	h := 24 + max(lines, 1)*26
	return min(max(h, lo), hi)
}

var stripTags = regexp.MustCompile(`<[^>]*>`)

// markupFrame is the frame of a template's output markup, with the agent's
// css, between lo and hi pixels high (frameHeight); nil for no output.
func markupFrame(agentCSS, markup string, lo, hi int) *frameView {
	if markup == "" {
		return nil
	}
	return &frameView{Doc: frameDoc(agentCSS, "", balance(markup)), Height: frameHeight(markup, lo, hi)}
}

// MaxHoverFrames is the most options whose hoverTemplate output gets a
// frame each (in a <details> beside the option). Chromium loads frames in
// closed <details> eagerly, lazy or not, so longer lists get one frame
// with every option's details, in order, each under the option's label.
const MaxHoverFrames = 40

// hoversDoc is the one frame of every option's details.
func hoversDoc(agentCSS string, opts []elicitation.Option, hovers []string) string {
	var body strings.Builder
	for i, h := range hovers {
		body.WriteString(`<section class="hover" id="h`)
		body.WriteString(strconv.Itoa(i))
		body.WriteString(`"><h3>`)
		body.WriteString(html.EscapeString(opts[i].DisplayLabel()))
		body.WriteString(`</h3>`)
		body.WriteString(balance(h))
		body.WriteString(`</section>`)
	}
	return frameDoc(agentCSS, "", body.String())
}
