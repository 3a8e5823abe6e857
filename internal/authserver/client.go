package authserver

import (
	"net/url"
	"slices"
	"time"

	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// opClient is a Client as op sees it: code flow, JWT access tokens, the
// login URL the consent page, the MCP scopes allowed.
type opClient struct {
	c      Client
	issuer string
	scopes []string
}

var _ op.Client = opClient{}

func (o opClient) GetID() string                    { return o.c.ID }
func (o opClient) RedirectURIs() []string           { return o.c.RedirectURIs }
func (o opClient) PostLogoutRedirectURIs() []string { return nil }

// ApplicationType is native for every client: op's rule for a native
// client is this server's one rule for all (https and private-use schemes
// exactly, loopback http on any port, RFC 8252), while its rule for a web
// client refuses a private-use scheme and a loopback port other than the
// registered one, which a client registering both kinds (VS Code: hosted
// redirect pages and http://127.0.0.1/) needs.
func (o opClient) ApplicationType() op.ApplicationType { return op.ApplicationTypeNative }

func (o opClient) AuthMethod() oidc.AuthMethod {
	switch o.c.AuthMethod {
	case string(oidc.AuthMethodBasic):
		return oidc.AuthMethodBasic
	case string(oidc.AuthMethodPost):
		return oidc.AuthMethodPost
	}
	return oidc.AuthMethodNone
}

func (o opClient) ResponseTypes() []oidc.ResponseType {
	return []oidc.ResponseType{oidc.ResponseTypeCode}
}
func (o opClient) GrantTypes() []oidc.GrantType {
	if o.c.Refresh {
		return []oidc.GrantType{oidc.GrantTypeCode, oidc.GrantTypeRefreshToken}
	}
	return []oidc.GrantType{oidc.GrantTypeCode}
}

// LoginURL is the consent page, which signs the person in first.
func (o opClient) LoginURL(id string) string {
	return o.issuer + ConsentPath + "?id=" + url.QueryEscape(id)
}

func (o opClient) AccessTokenType() op.AccessTokenType { return op.AccessTokenTypeJWT }
func (o opClient) IDTokenLifetime() time.Duration      { return time.Hour }
func (o opClient) DevMode() bool                       { return false }
func (o opClient) RestrictAdditionalIdTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}
func (o opClient) RestrictAdditionalAccessTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}
func (o opClient) IsScopeAllowed(scope string) bool     { return slices.Contains(o.scopes, scope) }
func (o opClient) IDTokenUserinfoClaimsAssertion() bool { return false }
func (o opClient) ClockSkew() time.Duration             { return 0 }
