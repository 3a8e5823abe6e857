// Package clientreg holds the OAuth clients the authorization server for
// MCP clients knows: clients the operator configured, clients described by
// a client ID metadata document at an https URL
// (draft-ietf-oauth-client-id-metadata-document, as MCP authorization
// 2025-11-25 uses them), and clients that registered themselves (RFC
// 7591), kept in a grant.Store. One rule, CheckRedirectURI, decides the
// redirect URIs of all three.
//
// It knows nothing of the OAuth library that serves the protocol: the
// server adapts a Client to what its library wants.
package clientreg

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net/url"
	"strings"
	"time"
)

// The token endpoint authentication methods a Client may use.
const (
	// AuthNone: a public client, no secret (PKCE protects the code).
	AuthNone = "none"
	// AuthSecretBasic: the secret in HTTP Basic authentication.
	AuthSecretBasic = "client_secret_basic"
	// AuthSecretPost: the secret in the token request's form body.
	AuthSecretPost = "client_secret_post"
)

// The grant types a Client may use.
const (
	GrantAuthorizationCode = "authorization_code"
	GrantRefreshToken      = "refresh_token"
)

// Source is where the server learnt of a client.
type Source string

// The sources of a Client.
const (
	// Registered: the client registered itself (RFC 7591).
	Registered Source = "registered"
	// Metadata: the client ID is an https URL serving the client's
	// metadata document.
	Metadata Source = "metadata"
	// Operator: the operator configured the client.
	Operator Source = "operator"
)

// Client is one OAuth client. Its JSON form is the operator's
// configuration of a client.
type Client struct {
	// ID is the client_id: random for a registered client, the document's
	// URL for a metadata client, chosen by the operator otherwise.
	ID string `json:"client_id"`
	// Name is client_name, shown on the consent page as what the client
	// says it is: never an identity.
	Name string `json:"client_name,omitempty"`
	// URI is client_uri, the client's home page (https), optional.
	URI string `json:"client_uri,omitempty"`
	// RedirectURIs are where authorization responses may go, each passing
	// CheckRedirectURI.
	RedirectURIs []string `json:"redirect_uris"`
	// AuthMethod is token_endpoint_auth_method: AuthNone,
	// AuthSecretBasic or AuthSecretPost.
	AuthMethod string `json:"token_endpoint_auth_method"`
	// GrantTypes are the grant types the client may use: authorization
	// code, and refresh_token when it asked for refresh tokens.
	GrantTypes []string `json:"grant_types,omitempty"`
	// SecretHash is HashSecret of the client's secret, for the secret
	// methods; the secret itself is never stored.
	SecretHash string `json:"client_secret_hash,omitempty"`
	// Source is where the client came from.
	Source Source `json:"-"`
	// IssuedAt is when the client registered or was fetched; zero for
	// an operator's client.
	IssuedAt time.Time `json:"-"`
}

// HashSecret is the form of a client secret that is kept. Secrets are 256
// random bits (an operator's too), so one SHA-256 suffices: there is
// nothing to guess that a slow hash would protect. It is "sha256:" and the
// hex digest, so an operator can write it with
// printf %s "$secret" | sha256sum.
func HashSecret(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// CheckSecret reports, in constant time, whether secret is the client's.
// A client without a secret method accepts no secret.
func (c Client) CheckSecret(secret string) bool {
	if c.AuthMethod == AuthNone || c.SecretHash == "" || secret == "" {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(HashSecret(secret)), []byte(c.SecretHash)) == 1
}

// AllowsRedirect reports whether redirectURI is one of the client's:
// exactly, or for a loopback http URI with any port (RFC 8252 section
// 7.3).
func (c Client) AllowsRedirect(redirectURI string) bool {
	for _, u := range c.RedirectURIs {
		if matchRedirect(u, redirectURI) {
			return true
		}
	}
	return false
}

// HasGrant reports whether the client may use the grant type.
func (c Client) HasGrant(grantType string) bool {
	for _, g := range c.GrantTypes {
		if g == grantType {
			return true
		}
	}
	return false
}

// RedirectHost is what the consent page names as where the person will be
// sent after consenting through redirectURI: the host of an http(s) URI
// (a loopback host means the person's own device), the scheme of a
// private-use URI (the app that claimed it). Empty when redirectURI is not
// one of the client's.
func (c Client) RedirectHost(redirectURI string) string {
	if !c.AllowsRedirect(redirectURI) {
		return ""
	}
	u, err := url.Parse(redirectURI)
	if err != nil {
		return ""
	}
	if host := u.Hostname(); host != "" {
		return strings.ToLower(host)
	}
	return strings.ToLower(u.Scheme) + ":"
}
