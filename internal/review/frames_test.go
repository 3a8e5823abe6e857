package review

import (
	"strings"
	"testing"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// TestRowsStayInTheirRows: parsed as the sandboxed frame parses it (no
// scripting), the rows document has exactly one row per option, whatever a
// row's markup, and the row after a hostile one keeps its content.
func TestRowsStayInTheirRows(t *testing.T) {
	for _, hostile := range []string{
		"<plaintext>x",
		"<p>a<plaintext></p>b",
		"<select><plaintext>q",
		"<noscript></div><div style=position:absolute>FAKE</div></noscript>",
		"<noscript>&lt;/div&gt;&lt;b&gt;FAKE&lt;/b&gt;</noscript>",
		"<p><noscript>&lt;/div&gt;</noscript>",
		"<xmp></div></xmp>",
		"<table><td>x",
	} {
		doc := rowsDoc("", []string{hostile, "<b>next</b>"})
		root, err := html.ParseWithOptions(strings.NewReader(doc), html.ParseOptionEnableScripting(false))
		if err != nil {
			t.Fatal(err)
		}
		var body *html.Node
		var find func(*html.Node)
		find = func(n *html.Node) {
			if n.Type == html.ElementNode && n.DataAtom == atom.Body {
				body = n
			}
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				find(c)
			}
		}
		find(root)
		var rows []*html.Node
		for c := body.FirstChild; c != nil; c = c.NextSibling {
			rows = append(rows, c)
		}
		if len(rows) != 2 || rows[1].Data != "div" || rows[1].FirstChild == nil || rows[1].FirstChild.Data != "b" {
			t.Errorf("row %q: the frame's body is not two rows:\n%s", hostile, doc[strings.Index(doc, "<body>"):])
		}
	}
}

// TestNothingOpensInTheTopLayer: the attributes that open an element in a
// frame's top layer without script (where containment does not hold it in
// its row) are dropped from template output; the elements stay.
func TestNothingOpensInTheTopLayer(t *testing.T) {
	for _, hostile := range []string{
		`<button popovertarget="p">open</button><div id="p" popover>cover</div>`,
		`<button POPOVERTARGET="p" popoverTargetAction="show">open</button><div id="p" POPOVER="manual">cover</div>`,
		`<button commandfor="d" command="show-modal">open</button><dialog id="d">cover</dialog>`,
		`<button interestfor="h">hover</button><div id="h" popover="hint">cover</div>`,
		`<svg><a popovertarget="p"><text>x</text></a></svg><div id="p" popover>cover</div>`,
	} {
		out := balance(hostile)
		for _, attr := range []string{"popover", "command", "interest"} {
			if strings.Contains(strings.ToLower(out), attr) {
				t.Errorf("%s\nbecame %s, which still has %s", hostile, out, attr)
			}
		}
		if !strings.Contains(out, "cover") {
			t.Errorf("%s lost its content: %s", hostile, out)
		}
	}
}
