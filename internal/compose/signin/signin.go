// Package signin composes reviewer sign-in (internal/reviewauth) for the
// review routes of a deployment from its settings: the local server and
// the review and submit Lambda functions call Middleware after
// compose.Build and wrap the review handlers with what it returns. It is
// apart from compose so that the MCP function does not link the OpenID
// client.
package signin

import (
	"context"
	"fmt"
	"net/http"

	"github.com/mcp-elicitation/elicitation/internal/compose"
	"github.com/mcp-elicitation/elicitation/internal/reviewauth"
)

// SessionKeyPurpose derives the session cookie's keys from the page-token
// keyring: every function that holds the keyring can check a session.
const SessionKeyPurpose = "elicitation review session v1"

// Middleware returns what puts sign-in in front of the review routes of a
// (built with compose.Pages): the identity when the settings name no
// issuer (the review link alone decides, as without this package). secret
// reads Settings.OIDCClientSecretARN (Secrets Manager on Lambda), at the
// first sign-in only.
func Middleware(a *compose.App, secret func(context.Context, string) (string, error)) (func(http.Handler) http.Handler, error) {
	s := a.Settings
	if !s.SignIn() {
		return func(h http.Handler) http.Handler { return h }, nil
	}
	if a.Keys == nil {
		return nil, fmt.Errorf("reviewer sign-in: no page-token keys to sign sessions with (build with compose.Pages)")
	}
	if s.PublicURL != "" {
		if err := reviewauth.CheckBase(s.PublicURL); err != nil {
			return nil, fmt.Errorf("--public-url: %w", err)
		}
	}
	clientSecret := func(context.Context) (string, error) { return s.OIDCClientSecret, nil }
	if s.OIDCClientSecretARN != "" {
		if secret == nil {
			return nil, fmt.Errorf("%s is set but this deployment reads no secrets", compose.Env("oidc-client-secret-arn"))
		}
		clientSecret = func(ctx context.Context) (string, error) { return secret(ctx, s.OIDCClientSecretARN) }
	}
	auth, err := reviewauth.New(reviewauth.Config{
		Issuer: s.OIDCIssuer, ClientID: s.OIDCClientID, ClientSecret: clientSecret,
		GroupsClaim: s.OIDCGroupsClaim, SessionTTL: s.ReviewSessionTTL,
		Keys:   a.Keys.Derive(SessionKeyPurpose),
		Base:   func(r *http.Request) string { return compose.ReviewBase(s.PublicURL, r) },
		Now:    a.Now,
		Logger: a.Log,
		Pages:  a.Pages,
	})
	if err != nil {
		return nil, err
	}
	return auth.Wrap, nil
}
