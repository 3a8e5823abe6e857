package clientreg

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Bounds on client metadata.
const (
	maxRedirectURIs = 20
	maxClientName   = 100 // runes
	maxClientURI    = 2000
)

// The RFC 7591 error codes a registration answers with.
const (
	codeInvalidRedirectURI = "invalid_redirect_uri"
	codeInvalidMetadata    = "invalid_client_metadata"
)

// clientMetadata is the RFC 7591 client metadata this server reads, from a
// registration request or a client ID metadata document; other members are
// ignored.
type clientMetadata struct {
	ClientID                string   `json:"client_id,omitempty"`
	RedirectURIs            []string `json:"redirect_uris"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method,omitempty"`
	GrantTypes              []string `json:"grant_types,omitempty"`
	ResponseTypes           []string `json:"response_types,omitempty"`
	ClientName              string   `json:"client_name,omitempty"`
	ClientURI               string   `json:"client_uri,omitempty"`
	// Read only to refuse a document that carries them.
	ClientSecret          *string `json:"client_secret,omitempty"`
	ClientSecretExpiresAt *int64  `json:"client_secret_expires_at,omitempty"`
}

// metadataError is metadata refused: an RFC 7591 error code and a
// description naming the member.
type metadataError struct {
	code        string
	description string
}

func (e *metadataError) Error() string { return e.description }

func invalidMetadata(format string, args ...any) *metadataError {
	return &metadataError{code: codeInvalidMetadata, description: fmt.Sprintf(format, args...)}
}

// toClient checks m and returns the client it describes (without ID,
// source or secret). A document (public) may use only AuthNone.
func (m clientMetadata) toClient(document bool) (Client, *metadataError) {
	if err := checkRedirectURIs(m.RedirectURIs); err != nil {
		return Client{}, err
	}
	method, err := authMethod(m.TokenEndpointAuthMethod, document)
	if err != nil {
		return Client{}, err
	}
	grants, err := grantTypes(m.GrantTypes)
	if err != nil {
		return Client{}, err
	}
	if err := responseTypes(m.ResponseTypes); err != nil {
		return Client{}, err
	}
	if err := checkClientName(m.ClientName); err != nil {
		return Client{}, err
	}
	if err := checkClientURI(m.ClientURI); err != nil {
		return Client{}, invalidMetadata("client_uri: %v", err)
	}
	return Client{
		Name:         m.ClientName,
		URI:          m.ClientURI,
		RedirectURIs: slices.Clone(m.RedirectURIs),
		AuthMethod:   method,
		GrantTypes:   grants,
	}, nil
}

func checkRedirectURIs(uris []string) *metadataError {
	if len(uris) == 0 {
		return &metadataError{code: codeInvalidRedirectURI, description: "redirect_uris: required, at least one"}
	}
	if len(uris) > maxRedirectURIs {
		return &metadataError{code: codeInvalidRedirectURI, description: fmt.Sprintf("redirect_uris: more than %d", maxRedirectURIs)}
	}
	for i, u := range uris {
		if err := CheckRedirectURI(u); err != nil {
			return &metadataError{code: codeInvalidRedirectURI, description: fmt.Sprintf("redirect_uris[%d]: %v", i, err)}
		}
	}
	return nil
}

func authMethod(method string, document bool) (string, *metadataError) {
	switch {
	case method == "" || method == AuthNone:
		return AuthNone, nil
	case document && (method == AuthSecretBasic || method == AuthSecretPost):
		return "", invalidMetadata("token_endpoint_auth_method: %s needs a secret, which a public document cannot hold; use none", method)
	case method == AuthSecretBasic || method == AuthSecretPost:
		return method, nil
	case method == "private_key_jwt":
		return "", invalidMetadata("token_endpoint_auth_method: private_key_jwt is not supported; use none")
	}
	return "", invalidMetadata("token_endpoint_auth_method: %q is not supported (none, client_secret_basic or client_secret_post)", method)
}

func grantTypes(grants []string) ([]string, *metadataError) {
	if len(grants) == 0 {
		return []string{GrantAuthorizationCode}, nil // RFC 7591 section 2
	}
	for _, g := range grants {
		if g != GrantAuthorizationCode && g != GrantRefreshToken {
			return nil, invalidMetadata("grant_types: %q is not supported (authorization_code, refresh_token)", g)
		}
	}
	if !slices.Contains(grants, GrantAuthorizationCode) {
		return nil, invalidMetadata("grant_types: authorization_code is required")
	}
	out := slices.Clone(grants)
	slices.Sort(out)
	return slices.Compact(out), nil
}

func responseTypes(types []string) *metadataError {
	for _, t := range types {
		if t != "code" {
			return invalidMetadata("response_types: %q is not supported (code)", t)
		}
	}
	return nil
}

func checkClientName(name string) *metadataError {
	if !utf8.ValidString(name) {
		return invalidMetadata("client_name: not UTF-8")
	}
	if utf8.RuneCountInString(name) > maxClientName {
		return invalidMetadata("client_name: longer than %d characters", maxClientName)
	}
	if strings.IndexFunc(name, unicode.IsControl) >= 0 {
		return invalidMetadata("client_name: control characters are not allowed")
	}
	return nil
}

// checkClientURI accepts an https URL with a host (it becomes a link on the
// consent page), or nothing.
func checkClientURI(raw string) error {
	if raw == "" {
		return nil
	}
	if len(raw) > maxClientURI {
		return fmt.Errorf("longer than %d bytes", maxClientURI)
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "https" || u.Hostname() == "" || u.User != nil {
		return errors.New("not an https URL with a host")
	}
	return nil
}
