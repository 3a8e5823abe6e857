package mcpendpoint

import (
	"context"
	"errors"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/mcp-elicitation/elicitation/internal/apikey"
	"github.com/mcp-elicitation/elicitation/internal/authserver"
	"github.com/mcp-elicitation/elicitation/internal/mcptools"
)

// MetadataPath is RFC 9728's well-known path; the resource's own form
// appends the resource's path (/mcp).
const MetadataPath = authserver.ResourceMetadataPath

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
	o.ResourceMetadata = func(r *http.Request) string { return authserver.ResourceMetadataURL(as.Resource(r)) }
}

// Metadata serves the protected resource's metadata (RFC 9728) at
// MetadataPath and MetadataPath + "/mcp" (as.ResourceMetadata, which a
// process serving the authorization server alone serves too).
func Metadata(as *authserver.Server) http.Handler { return as.ResourceMetadata() }
