package review

import (
	"bytes"
	"html/template"
	"net/url"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/renderer"
	gmhtml "github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/util"
)

// The request's message is shown as a safe subset of Markdown (CommonMark
// as github.com/yuin/goldmark parses it): paragraphs, emphasis, code spans
// and blocks, lists, block quotes, line breaks, and links to http(s) only.
// Everything else is shown as the text it is: raw HTML (inline and blocks)
// appears escaped, exactly as the agent sent it; an image shows its alt
// text (the page loads nothing from a message); a link to any other scheme
// (javascript:, data:, mailto:, a relative path) keeps its text and loses
// its link; a heading becomes a bold paragraph, so that a message cannot
// reorder the page's own headings. A newline in the message is a line
// break, so a plain-text message keeps its shape.

var markdown = goldmark.New(
	goldmark.WithRendererOptions(
		gmhtml.WithHardWraps(),
		renderer.WithNodeRenderers(util.Prioritized(safeSubset{}, 100)),
	),
)

// MessageHTML is a message as the review page shows it (the safe subset),
// for the other views of a request (the MCP App's, through elicit_app_view).
func MessageHTML(msg string) string { return string(messageHTML(msg)) }

// messageHTML renders a message as the safe subset; on a (theoretical)
// renderer error it falls back to the escaped text.
func messageHTML(msg string) template.HTML {
	var b bytes.Buffer
	if err := markdown.Convert([]byte(msg), &b); err != nil {
		return template.HTML("<p>" + template.HTMLEscapeString(msg) + "</p>")
	}
	return template.HTML(b.String()) // #nosec: built only by the renderers below and goldmark's escaping ones
}

// safeSubset overrides goldmark's HTML renderer for every node kind that
// could carry markup, a fetch or a navigation into the page.
type safeSubset struct{}

func (safeSubset) RegisterFuncs(r renderer.NodeRendererFuncRegisterer) {
	r.Register(ast.KindRawHTML, renderRawHTML)
	r.Register(ast.KindHTMLBlock, renderHTMLBlock)
	r.Register(ast.KindImage, renderImage)
	r.Register(ast.KindLink, renderLink)
	r.Register(ast.KindAutoLink, renderAutoLink)
	r.Register(ast.KindHeading, renderHeading)
}

func renderRawHTML(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if entering {
		segs := node.(*ast.RawHTML).Segments
		for i := range segs.Len() {
			s := segs.At(i)
			_, _ = w.Write(util.EscapeHTML(s.Value(source)))
		}
	}
	return ast.WalkSkipChildren, nil
}

func renderHTMLBlock(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	n := node.(*ast.HTMLBlock)
	var text []byte
	for i := range n.Lines().Len() {
		l := n.Lines().At(i)
		text = append(text, l.Value(source)...)
	}
	if n.HasClosure() {
		text = append(text, n.ClosureLine.Value(source)...)
	}
	_, _ = w.WriteString(`<p class="raw">`)
	lines := strings.Split(strings.TrimRight(string(text), "\n"), "\n")
	for i, l := range lines {
		if i > 0 {
			_, _ = w.WriteString("<br>\n")
		}
		_, _ = w.Write(util.EscapeHTML([]byte(l)))
	}
	_, _ = w.WriteString("</p>\n")
	return ast.WalkSkipChildren, nil
}

// renderImage writes the image's alt text, nothing that loads.
func renderImage(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if entering {
		_, _ = w.Write(util.EscapeHTML(plainText(node, source)))
	}
	return ast.WalkSkipChildren, nil
}

func plainText(n ast.Node, source []byte) []byte {
	var b []byte
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		switch t := c.(type) {
		case *ast.Text:
			b = append(b, t.Value(source)...)
		case *ast.String:
			b = append(b, t.Value...)
		default:
			b = append(b, plainText(c, source)...)
		}
	}
	return b
}

// webURL reports whether dest is an absolute http or https URL with a host.
func webURL(dest string) bool {
	u, err := url.Parse(dest)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

func writeAnchor(w util.BufWriter, dest []byte, title []byte) {
	_, _ = w.WriteString(`<a href="`)
	_, _ = w.Write(util.EscapeHTML(util.URLEscape(dest, true)))
	_, _ = w.WriteString(`" rel="nofollow noopener noreferrer" target="_blank"`)
	if len(title) > 0 {
		_, _ = w.WriteString(` title="`)
		_, _ = w.Write(util.EscapeHTML(title))
		_ = w.WriteByte('"')
	}
	_ = w.WriteByte('>')
}

// renderLink links only to http(s); any other link keeps its text.
func renderLink(w util.BufWriter, _ []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	n := node.(*ast.Link)
	if !webURL(string(n.Destination)) {
		return ast.WalkContinue, nil
	}
	if entering {
		writeAnchor(w, n.Destination, n.Title)
	} else {
		_, _ = w.WriteString("</a>")
	}
	return ast.WalkContinue, nil
}

func renderAutoLink(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	n := node.(*ast.AutoLink)
	label := util.EscapeHTML(n.Label(source))
	if n.AutoLinkType != ast.AutoLinkURL || !webURL(string(n.URL(source))) {
		_, _ = w.Write(label)
		return ast.WalkContinue, nil
	}
	writeAnchor(w, n.URL(source), nil)
	_, _ = w.Write(label)
	_, _ = w.WriteString("</a>")
	return ast.WalkContinue, nil
}

func renderHeading(w util.BufWriter, _ []byte, _ ast.Node, entering bool) (ast.WalkStatus, error) {
	if entering {
		_, _ = w.WriteString("<p><strong>")
	} else {
		_, _ = w.WriteString("</strong></p>\n")
	}
	return ast.WalkContinue, nil
}
