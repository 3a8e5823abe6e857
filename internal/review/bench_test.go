package review_test

import (
	"fmt"
	"net/http/httptest"
	"testing"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// BenchmarkPage measures the server side of GET /review/{id}/{key}: the
// Service's read and render audit on the embedded store, the templates and
// the page, for 10, 100 and 500 options, default and templated. It reports
// the page weight as bytes/page.
func BenchmarkPage(b *testing.B) {
	for _, n := range []int{10, 100, 500} {
		for _, templated := range []bool{false, true} {
			name := fmt.Sprintf("options=%d/default", n)
			in := elicitation.SelectionInput{Message: "Pick one", Options: options(n)}
			if templated {
				name = fmt.Sprintf("options=%d/templated", n)
				in.RowTemplate, in.HeadingTemplate, in.FooterTemplate, in.HoverTemplate, in.CSS = rowTpl, headingTpl, footerTpl, hoverTpl, stockCSS
			}
			b.Run(name, func(b *testing.B) {
				e := newEnv(b)
				c := e.selection(in)
				h := e.handler.PageHandler()
				var size int
				b.ResetTimer()
				for b.Loop() {
					w := httptest.NewRecorder()
					h.ServeHTTP(w, httptest.NewRequest("GET", c.Path(), nil))
					if w.Code != 200 {
						b.Fatalf("status %d", w.Code)
					}
					size = w.Body.Len()
				}
				b.ReportMetric(float64(size), "bytes/page")
			})
		}
	}
}
