// Package templates holds the review page's own Go html/template files and
// stylesheets, embedded in the binary. Package review parses them once at
// start-up. (The agent's Liquid templates are not here: they arrive with
// each request and are rendered by package safeliquid.)
package templates

import "embed"

// FS holds page.html (the review page, its final and error states),
// page.css (the page's stylesheet, inlined into every page) and frame.css
// (the base stylesheet of every sandboxed template frame).
//
//go:embed page.html page.css frame.css
var FS embed.FS
