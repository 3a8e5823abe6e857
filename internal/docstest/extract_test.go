// Package docstest keeps the documentation true: it extracts every code
// block of the repository's Markdown, classifies it (shell commands,
// configuration, or prose) and checks the commands against the real binaries'
// flag sets and the configurations against their documented shapes. The
// convention authors follow is in docs/hosts.md ("Docs under test").
package docstest

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"
)

// Block is one code block of a Markdown file.
type Block struct {
	File string // path as given to Extract
	Line int    // 1-based line of the block's first content line
	// Lang is the first word of a fenced block's info string, lower case;
	// empty for an indented block or a bare fence.
	Lang string
	// Host names the host whose configuration shape a config block must
	// have (info string word host=NAME).
	Host string
	// NoCheck is the reason given with "no-check: REASON" in the info
	// string: the block is parsed but its commands are not looked up.
	NoCheck string
	Text    string
	info    string
}

func (b Block) String() string { return fmt.Sprintf("%s:%d", b.File, b.Line) }

// Extract returns the code blocks of a Markdown document, fenced and
// indented, in document order (also those inside lists and quotes).
func Extract(file string, src []byte) ([]Block, error) {
	doc := goldmark.New().Parser().Parse(text.NewReader(src))
	var blocks []Block
	var err error
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		var b Block
		switch n := n.(type) {
		case *ast.FencedCodeBlock:
			if n.Info != nil {
				b.info = strings.TrimSpace(string(n.Info.Segment.Value(src)))
			}
		case *ast.CodeBlock:
		default:
			return ast.WalkContinue, nil
		}
		lines := n.Lines()
		var buf bytes.Buffer
		for i := 0; i < lines.Len(); i++ {
			seg := lines.At(i)
			buf.Write(seg.Value(src))
		}
		b.File, b.Text = file, buf.String()
		if lines.Len() > 0 {
			b.Line = 1 + bytes.Count(src[:lines.At(0).Start], []byte("\n"))
		} else {
			b.Line = 1 + bytes.Count(src[:startOf(n, src)], []byte("\n"))
		}
		if e := b.parseInfo(); e != nil && err == nil {
			err = fmt.Errorf("%s: %w", b, e)
		}
		blocks = append(blocks, b)
		return ast.WalkSkipChildren, nil
	})
	return blocks, err
}

func startOf(n ast.Node, src []byte) int {
	if f, ok := n.(*ast.FencedCodeBlock); ok && f.Info != nil {
		return f.Info.Segment.Start
	}
	return 0
}

// parseInfo reads "LANG [host=NAME] [no-check: REASON…]".
func (b *Block) parseInfo() error {
	info := b.info
	if i := strings.Index(info, "no-check"); i >= 0 {
		rest := strings.TrimSpace(info[i+len("no-check"):])
		rest = strings.TrimSpace(strings.TrimPrefix(rest, ":"))
		if rest == "" {
			return fmt.Errorf("no-check needs a reason: write \"no-check: why this block cannot be checked\"")
		}
		b.NoCheck, info = rest, info[:i]
	}
	words := strings.Fields(info)
	if len(words) == 0 {
		return nil
	}
	b.Lang = strings.ToLower(strings.Trim(words[0], "{}."))
	for _, w := range words[1:] {
		switch {
		case strings.HasPrefix(w, "host="):
			b.Host = strings.TrimPrefix(w, "host=")
		default:
			return fmt.Errorf("info string word %q is not host=NAME or no-check: REASON", w)
		}
	}
	return nil
}
