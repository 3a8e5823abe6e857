package mcptools

import (
	"encoding/json"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The review as an app-rendered elicitation (SEP-3118, as drafted in
// ext-apps and implemented by the MCP Inspector 2.x): the server declares
// elicitation: {} inside its io.modelcontextprotocol/ui capability (with
// the MCP App on), and where the client declares it too, beside form
// elicitation and the MCP App MIME type, the host's form that elicit_await
// offers (hostFormOffer: on a session an elicitation/create, on 2026-07-28
// an input-required result or a task's input request) names the app's page
// in _meta.ui.resourceUri and the request in _meta.elicitationId. Such a
// host renders the page and hands it the elicitation over the app bridge;
// the app answers with an ElicitResult matching the form, which the host
// returns as the elicitation's answer, and which is then submitted under
// the review page's rules (submitHostAnswer), exactly as the host's own
// form's answer: the server cannot tell the app's answer from the host's
// fallback form, so both are recorded via host-form. The offer needs no
// askInHost: it is made wherever the MCP App may decide the request
// (Service.HostFormRefusal), as the app's own tools are.

// metaElicitationID names the request in an app-rendered elicitation's
// _meta, so that the app can show the full review (elicit_app_view).
const metaElicitationID = "elicitationId"

// appElicits reports whether the client that sent req negotiated
// app-rendered elicitations with this server: the MCP App on, form
// elicitation, and the ui extension with the MCP App MIME type and a
// nested elicitation object.
func (s *Server) appElicits(req *mcp.CallToolRequest) bool {
	if !s.app || !s.canAskInHost(req) {
		return false
	}
	raw, err := json.Marshal(req.ClientCapabilities().Extensions[UIExtension])
	if err != nil {
		return false
	}
	var ui struct {
		MIMETypes   []string        `json:"mimeTypes"`
		Elicitation json.RawMessage `json:"elicitation"`
	}
	if json.Unmarshal(raw, &ui) != nil || !slices.Contains(ui.MIMETypes, AppMIMEType) {
		return false
	}
	return len(ui.Elicitation) > 0 && ui.Elicitation[0] == '{'
}

// appRendered names the app's page and request id in an elicitation's
// _meta, keeping what it carries already.
func appRendered(params *mcp.ElicitParams, id string) {
	if params.Meta == nil {
		params.Meta = mcp.Meta{}
	}
	params.Meta["ui"] = map[string]any{"resourceUri": AppResourceURI}
	params.Meta[metaElicitationID] = id
}
