package mcpendpoint

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/mcp-elicitation/elicitation/internal/apikey"
	"github.com/mcp-elicitation/elicitation/internal/authserver"
	"github.com/mcp-elicitation/elicitation/internal/mcptools"
)

// MetadataPath is RFC 9728's well-known path; the resource's own form
// appends the resource's path (/mcp).
const MetadataPath = "/.well-known/oauth-protected-resource"

// withOAuth sets o to take as's access tokens beside API keys: the
// token's person is the principal, its scopes checked, and every
// challenge names the resource's metadata.
func withOAuth(o *apikey.AuthOptions, as *authserver.Server) {
	o.Token = func(ctx context.Context, token string, r *http.Request) (*auth.TokenInfo, error) {
		a, err := as.Verify(ctx, token, r)
		switch {
		case errors.Is(err, authserver.ErrInvalidToken):
			return nil, auth.ErrInvalidToken
		case err != nil:
			return nil, err
		}
		return &auth.TokenInfo{UserID: a.Principal, Scopes: a.Scopes, Expiration: a.Expires, Extra: map[string]any{"clientID": a.ClientID, mcptools.PersonKey: a.Person}}, nil
	}
	o.Scopes = as.Scopes()
	o.ResourceMetadata = func(r *http.Request) string { return MetadataURL(as.Resource(r)) }
}

// MetadataURL is where RFC 9728 puts the metadata of resource: the
// well-known path between its host and its path.
func MetadataURL(resource string) string {
	u, err := url.Parse(resource)
	if err != nil {
		return resource
	}
	u.Path = MetadataPath + u.Path
	u.RawQuery, u.Fragment = "", ""
	return u.String()
}

// Metadata serves the protected resource's metadata (RFC 9728) at
// MetadataPath and MetadataPath + "/mcp": the resource, its authorization
// server, the scopes.
func Metadata(as *authserver.Server) http.Handler {
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
		m := oauthex.ProtectedResourceMetadata{
			Resource:               as.Resource(r),
			AuthorizationServers:   []string{as.Issuer(r)},
			ScopesSupported:        as.Scopes(),
			BearerMethodsSupported: []string{"header"},
			ResourceName:           "mcp-elicitation",
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "public, max-age=300")
		w.Header().Set("Access-Control-Allow-Origin", "*")
		_ = json.NewEncoder(w).Encode(m)
	})
}
