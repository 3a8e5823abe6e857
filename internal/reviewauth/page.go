package reviewauth

import (
	"html/template"
	"net/http"

	"github.com/mcp-elicitation/elicitation/internal/review"
)

var pageTemplate = template.Must(template.New("").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Heading}}</title>
<style>body{font:16px/1.5 system-ui,sans-serif;margin:0;padding:1.5rem;max-width:40rem}@media (prefers-color-scheme:dark){body{background:#111;color:#eee}}</style>
</head><body><main><h1>{{.Heading}}</h1><p>{{.Text}}</p></main></body></html>
`))

// page writes a small self-contained page with the review page's
// hardening headers (review.Harden) and a policy of its own: no script,
// no form, inline style only.
func page(w http.ResponseWriter, status int, heading, text string) {
	review.Harden(w.Header(), "default-src 'none'; style-src 'unsafe-inline'; form-action 'none'; base-uri 'none'; frame-ancestors 'none'")
	w.WriteHeader(status)
	_ = pageTemplate.Execute(w, struct{ Heading, Text string }{heading, text})
}
