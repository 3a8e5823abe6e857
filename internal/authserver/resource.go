package authserver

import (
	"encoding/json"
	"net/http"

	"github.com/mcp-elicitation/elicitation/internal/accesstoken"
)

// ResourceMetadataPath is RFC 9728's well-known path; the resource's own
// form appends the resource's path (ResourceMetadataPath + ResourcePath).
const ResourceMetadataPath = accesstoken.MetadataPath

// resourceMetadata is RFC 9728's document, the members this server
// fills.
type resourceMetadata struct {
	Resource               string   `json:"resource"`
	AuthorizationServers   []string `json:"authorization_servers"`
	ScopesSupported        []string `json:"scopes_supported,omitempty"`
	BearerMethodsSupported []string `json:"bearer_methods_supported,omitempty"`
	ResourceName           string   `json:"resource_name,omitempty"`
}

// ResourceMetadata serves the protected resource's metadata (RFC 9728),
// at ResourceMetadataPath and ResourceMetadataPath + ResourcePath: the
// resource, this server as its authorization server, the scopes. It is
// here, not beside the MCP endpoint, so that a process serving the
// authorization server without /mcp (the oauth Lambda function) serves it
// without linking the MCP SDK.
func (s *Server) ResourceMetadata() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodOptions {
			w.Header().Set("Access-Control-Allow-Origin", "*")
			w.Header().Set("Access-Control-Allow-Methods", "GET")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET")
			http.Error(w, "GET only", http.StatusMethodNotAllowed)
			return
		}
		m := resourceMetadata{
			Resource:               s.Resource(r),
			AuthorizationServers:   []string{s.Issuer(r)},
			ScopesSupported:        s.Scopes(),
			BearerMethodsSupported: []string{"header"},
			ResourceName:           "mcp-elicitation",
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "public, max-age=300")
		w.Header().Set("Access-Control-Allow-Origin", "*")
		_ = json.NewEncoder(w).Encode(m)
	})
}
