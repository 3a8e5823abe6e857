// Package accesstoken is what the MCP endpoint knows of the deployment's
// OAuth access tokens: what a valid one grants (Access), the refusals,
// and the Verifier it asks. internal/authserver implements Verifier; the
// endpoint (internal/compose/mcpendpoint) links this package only, so a
// binary that serves /mcp without OAuth (the proxy's embedded service)
// does not link the authorization server.
package accesstoken

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// Access is what a valid access token grants.
type Access struct {
	// Principal is the person, as reviewers are named (a verified
	// e-mail, else "sub:" and the subject).
	Principal string
	// Person is who signed in, as reviewer sign-in names them.
	Person   elicitation.Identity
	ClientID string
	Scopes   []string
	Expires  time.Time
}

// The refusals of Verify.
var (
	// ErrInvalid: not a token of this deployment for this resource, or
	// expired, or revoked (RFC 6750 invalid_token).
	ErrInvalid = errors.New("invalid access token")
	// ErrUnavailable: the check could not be made (the store failed).
	ErrUnavailable = errors.New("token check unavailable")
)

// Verifier checks access tokens presented to the protected resource.
type Verifier interface {
	// Verify checks token, presented in r.
	Verify(ctx context.Context, token string, r *http.Request) (Access, error)
	// Resource is the protected resource's URL for r (the MCP endpoint).
	Resource(r *http.Request) string
	// Issuer is the authorization server's issuer for r.
	Issuer(r *http.Request) string
	// Scopes are the scopes a token needs.
	Scopes() []string
}

// MetadataPath is RFC 9728's well-known path of a protected resource's
// metadata; the resource's own form appends the resource's path.
const MetadataPath = "/.well-known/oauth-protected-resource"

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
