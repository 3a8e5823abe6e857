package mcpendpoint

import (
	"context"
	"errors"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/mcp-elicitation/elicitation/internal/accesstoken"
	"github.com/mcp-elicitation/elicitation/internal/apikey"
	"github.com/mcp-elicitation/elicitation/internal/mcptools"
)

// withOAuth sets o to take as's access tokens beside API keys: the
// token's person is the principal, its scopes checked, and every
// challenge names the resource's metadata.
func withOAuth(o *apikey.AuthOptions, as accesstoken.Verifier) {
	o.Token = func(ctx context.Context, token string, r *http.Request) (*auth.TokenInfo, error) {
		a, err := as.Verify(ctx, token, r)
		switch {
		case errors.Is(err, accesstoken.ErrInvalid):
			return nil, auth.ErrInvalidToken
		case err != nil:
			return nil, err
		}
		return &auth.TokenInfo{UserID: a.Principal, Scopes: a.Scopes, Expiration: a.Expires, Extra: map[string]any{"clientID": a.ClientID, mcptools.PersonKey: a.Person}}, nil
	}
	o.Scopes = as.Scopes()
	o.ResourceMetadata = func(r *http.Request) string { return accesstoken.MetadataURL(as.Resource(r)) }
}
