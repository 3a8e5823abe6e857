package review_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
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
			in := elicitation.Input{Message: "Pick one", Options: options(n)}
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

// BenchmarkInbox measures the server side of GET /review/ with 10,000
// pending requests on the embedded store, 9,000 of them for the signed-in
// reviewer (a tenth name another reviewer), some with a quorum: the
// index's read, the may-decide rule for each, and the page of the 200
// most urgent. It reports the page weight as bytes/page.
func BenchmarkInbox(b *testing.B) {
	e := newSignedInEnv(b)
	ctx := context.Background()
	for i := range 10000 {
		in := elicitation.Input{Message: fmt.Sprintf("Deploy service-%d to production?\nreplicas: %d", i, i%5), Context: json.RawMessage(`{"n":1}`), TimeoutSeconds: 600 + i}
		switch {
		case i%10 == 0:
			in.Reviewers = []string{"carol@example.com"}
		case i%7 == 0:
			in.Reviewers, in.Approvals = []string{"bob@example.com", "carol@example.com", "dave@example.com"}, 2
		}
		if _, err := e.svc.Create(ctx, fmt.Sprintf("agent-%d@example.com", i%13), elicitation.KindApproval, in); err != nil {
			b.Fatal(err)
		}
	}
	h := fakeSignIn(e.mux)
	var size int
	b.ResetTimer()
	for b.Loop() {
		req := httptest.NewRequest("GET", "/review/", nil)
		req.AddCookie(&http.Cookie{Name: reviewerCookie, Value: "bob"})
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != 200 || !strings.Contains(w.Body.String(), "Requests 1–200 of 9000, most urgent first.") {
			b.Fatalf("status %d\n%.600s", w.Code, w.Body.String())
		}
		size = w.Body.Len()
	}
	b.ReportMetric(float64(size), "bytes/page")
}
