package reviewauth

import (
	"html/template"
	"net/http"
)

var pageTemplate = template.Must(template.New("").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Heading}}</title>
<style>body{font:16px/1.5 system-ui,sans-serif;margin:0;padding:1.5rem;max-width:40rem}@media (prefers-color-scheme:dark){body{background:#111;color:#eee}}</style>
</head><body><main><h1>{{.Heading}}</h1><p>{{.Text}}</p></main></body></html>
`))

// page writes a small self-contained page with the review page's
// hardening headers (no script, not framed, not cached, no referrer).
func page(w http.ResponseWriter, status int, heading, text string) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'none'; base-uri 'none'; frame-ancestors 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_ = pageTemplate.Execute(w, struct{ Heading, Text string }{heading, text})
}
