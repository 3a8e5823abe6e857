package review_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/testenv"
)

// nested returns depth levels of Markdown nesting, each line opening one
// more level with open (CommonMark: a list item's content starts after
// its marker, so each level is indented by the marker's width).
func nested(depth int, open func(level int) (indent, line string)) string {
	var b strings.Builder
	for i := range depth {
		indent, line := open(i)
		b.WriteString(strings.Repeat(indent, i) + line + "\n")
	}
	return b.String()
}

// TestBrowserDeepNesting: a message of 20 nested lists (520 bytes), 20
// nested block quotes, or both mixed, does not make the review page scroll
// sideways at 390 or 320 px, and its deepest item keeps room for its text
// (docs/review-page.md: no sideways scrolling, even with hostile text).
func TestBrowserDeepNesting(t *testing.T) {
	testenv.Slow(t, "Chromium")
	t.Parallel()
	e := newEnv(t)
	lists := nested(20, func(int) (string, string) { return "  ", "- item" })
	if len(lists) != 520 {
		t.Fatalf("the list message is %d bytes, want 520", len(lists))
	}
	quotes := strings.Repeat("> ", 20) + "deep quote\n"
	mixed := nested(20, func(i int) (string, string) {
		if i%2 == 0 {
			return "   ", "1. step"
		}
		return "   ", "- note"
	}) + strings.Repeat("> ", 12) + "- and a quoted list\n"
	var flows []flow
	for name, msg := range map[string]string{"lists": lists, "quotes": quotes, "mixed": mixed} {
		c := e.approval(elicitation.Input{Message: msg, Context: json.RawMessage(`{"ok":true}`)})
		for _, vp := range []string{"p390", "p320"} {
			flows = append(flows, flow{"name": fmt.Sprintf("%s/%s", name, vp), "viewport": vp, "do": "wide", "url": c.Path(), "minWidth": 120})
		}
	}
	runBrowser(t, e, flows, "")
}
