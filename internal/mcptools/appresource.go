package mcptools

import (
	"context"
	"io/fs"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/templates"
)

// The MCP App's page (the io.modelcontextprotocol/ui extension, as npm
// @modelcontextprotocol/ext-apps 2.0 defines it): one ui:// resource of
// MIME type text/html;profile=mcp-app, a self-contained HTML document
// (templates/app.html: inline script and style, no fetch, no image, no
// nested frame), which the creating tools name in _meta.ui.resourceUri
// (and in the older flat key ui/resourceUri, as the SDK's registerAppTool
// writes both). The host renders it in its sandboxed frame; it reads the
// creating call's result (elicitationId, reviewUrl), calls elicit_app_view
// and decides through elicit_app_decide (app.go).

// AppResourceURI names the app's page.
const AppResourceURI = "ui://elicitation/review.html"

// AppMIMEType is the MCP Apps HTML profile (ext-apps RESOURCE_MIME_TYPE).
const AppMIMEType = "text/html;profile=mcp-app"

// legacyResourceURIMeta is ext-apps' RESOURCE_URI_META_KEY, still read by
// older hosts.
const legacyResourceURIMeta = "ui/resourceUri"

// appPage is the page's text, read once.
var appPage = func() string {
	b, err := fs.ReadFile(templates.FS, "app.html")
	if err != nil {
		panic("mcptools: templates/app.html: " + err.Error())
	}
	return string(b)
}()

// appResourceMeta is the resource's _meta.ui (McpUiResourceMeta): an
// empty csp (no connect, resource or frame domains: the page fetches
// nothing) and a visible border.
func appResourceMeta() mcp.Meta {
	return mcp.Meta{"ui": map[string]any{
		"csp":           map[string]any{"connectDomains": []string{}, "resourceDomains": []string{}, "frameDomains": []string{}},
		"prefersBorder": true,
	}}
}

func (s *Server) addAppResource() {
	if !s.app {
		return
	}
	s.mcp.AddResource(&mcp.Resource{
		URI: AppResourceURI, Name: "elicitation-review", Title: "Review in the conversation",
		Description: "The elicitation MCP App: shows a request as the review page does and decides it in the host.",
		MIMEType:    AppMIMEType, Meta: appResourceMeta(),
	}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{
			URI: AppResourceURI, MIMEType: AppMIMEType, Text: appPage, Meta: appResourceMeta(),
		}}}, nil
	})
}
