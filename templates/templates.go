// Package templates holds the review page's own Go html/template files and
// stylesheets, embedded in the binary. Package review parses them once at
// start-up. (The agent's Liquid templates are not here: they arrive with
// each request and are rendered by package safeliquid.)
package templates

import "embed"

// FS holds page.html (the review page, its final and error states),
// page.css (the page's stylesheet, inlined into every page), frame.css
// (the base stylesheet of every sandboxed template frame), inbox.html
// and inbox.css (the signed-in reviewer's inbox, styled by page.css and
// its own few rules after it), and app.html (the MCP App's page, served
// by package mcptools as a ui:// resource), and consent.html (the page where
// a person lets an MCP client connect as them, package authserver), and
// insights.html and insights.css (the signed-in reviewers' Insights page).
//
//go:embed page.html page.css frame.css inbox.html inbox.css app.html consent.html insights.html insights.css
var FS embed.FS
