package authserver

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"

	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"

	"github.com/mcp-elicitation/elicitation/internal/ratelimit"
)

// metadata serves RFC 8414's document (and the same as OpenID discovery):
// op's, with the endpoints this server does not route left out and what
// MCP clients look for added (registration, client ID metadata
// documents, PKCE S256 only, iss in the response).
func (s *Server) metadata(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET")
		http.Error(w, "GET only", http.StatusMethodNotAllowed)
		return
	}
	ctx := op.ContextWithIssuer(r.Context(), s.cfg.Base(r))
	issuer := op.IssuerFromContext(ctx)
	c := op.CreateDiscoveryConfig(ctx, s.provider, storage{s})
	c.UserinfoEndpoint, c.IntrospectionEndpoint, c.EndSessionEndpoint, c.DeviceAuthorizationEndpoint, c.CheckSessionIframe = "", "", "", "", ""
	c.IntrospectionEndpointAuthMethodsSupported, c.IntrospectionEndpointAuthSigningAlgValuesSupported = nil, nil
	c.RegistrationEndpoint = issuer + RegisterPath
	c.ScopesSupported = append([]string{oidc.ScopeOfflineAccess}, s.cfg.Scopes...)
	c.ResponseTypesSupported = []string{string(oidc.ResponseTypeCode)}
	c.ResponseModesSupported = []string{"query"}
	c.GrantTypesSupported = []oidc.GrantType{oidc.GrantTypeCode, oidc.GrantTypeRefreshToken}
	c.CodeChallengeMethodsSupported = []oidc.CodeChallengeMethod{oidc.CodeChallengeMethodS256}
	c.TokenEndpointAuthMethodsSupported = []oidc.AuthMethod{oidc.AuthMethodNone, oidc.AuthMethodBasic, oidc.AuthMethodPost}
	c.RevocationEndpointAuthMethodsSupported = c.TokenEndpointAuthMethodsSupported
	b, err := json.Marshal(c)
	var doc map[string]any
	if err == nil {
		err = json.Unmarshal(b, &doc)
	}
	if err != nil {
		http.Error(w, "metadata unavailable", http.StatusInternalServerError)
		return
	}
	doc["client_id_metadata_document_supported"] = true
	doc["authorization_response_iss_parameter_supported"] = true
	doc["protected_resources"] = []string{s.Resource(r)}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "public, max-age=300")
	w.Header().Set("Access-Control-Allow-Origin", "*")
	_ = json.NewEncoder(w).Encode(doc)
}

// intercept checks, in front of op, what op does not: the RFC 8707
// resource of an authorization or token request must be the one this
// server protects (and is what the token will be bound to), and an
// authorization request without a scope asks for the default scopes.
// It also marks every token response Cache-Control: no-store (RFC 6749
// section 5.1, OAuth 2.1 section 3.2.3), which op leaves out, and
// answers a client assertion (private_key_jwt, not supported) with
// invalid_client, where op's refresh grant answers a server_error; and
// answers server_error where the store failed under op (faultWriter),
// and adds RFC 9207's iss to op's error redirects (issWriter).
func (s *Server) intercept(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.overLimit(w, r) {
			return
		}
		resource := s.Resource(r)
		switch r.URL.Path {
		case AuthorizePath:
			if wait := s.cfg.Authorizations.Take(s.cfg.Source(r), s.now()); wait > 0 {
				ratelimit.RetryAfter(w.Header(), wait)
				oauthError(w, http.StatusTooManyRequests, "temporarily_unavailable", "too many sign-ins started from this address: try again later")
				return
			}
			q := r.URL.Query()
			if got := q.Get("resource"); got != "" && !sameResource(got, resource) {
				oauthError(w, http.StatusBadRequest, "invalid_target", "this server issues tokens for "+resource+" only")
				return
			}
			if q.Get("scope") == "" {
				q.Set("scope", strings.Join(s.cfg.Scopes, " "))
				r.URL.RawQuery = q.Encode()
			}
			r = r.WithContext(contextWithResource(r, resource))
			w = issWriter{ResponseWriter: w, issuer: s.cfg.Base(r)}
		case TokenPath:
			w.Header().Set("Cache-Control", "no-store")
			call := &tokenCall{}
			w, r = &faultWriter{ResponseWriter: w, call: call}, r.WithContext(context.WithValue(r.Context(), tokenCallKey{}, call))
			if err := r.ParseForm(); err == nil {
				call.verifier = r.Form.Get("code_verifier") // where op reads it
				if got := r.PostForm.Get("resource"); got != "" && !sameResource(got, resource) {
					oauthError(w, http.StatusBadRequest, "invalid_target", "this server issues tokens for "+resource+" only")
					return
				}
				if r.PostForm.Has("client_assertion_type") || r.PostForm.Has("client_assertion") {
					oauthError(w, http.StatusUnauthorized, "invalid_client", "private_key_jwt is not supported: use none, client_secret_basic or client_secret_post")
					return
				}
			}
		}
		next.ServeHTTP(w, r)
	})
}

// overLimit counts a token, revocation or authorization request against
// Config.Requests, by its source and the client it names, and answers one
// over the limit: 429 temporarily_unavailable with Retry-After. Of the
// answers RFC 6749 and RFC 8628 allow, this is the one OAuth clients read
// as "later": the TypeScript SDK's keeps its tokens on any error but
// invalid_grant and invalid_client (and starts a new sign-in on a
// server_error), golang.org/x/oauth2 keeps them on any error; slow_down
// is a device-flow poll's.
func (s *Server) overLimit(w http.ResponseWriter, r *http.Request) bool {
	if r.URL.Path != TokenPath && r.URL.Path != RevokePath && r.URL.Path != AuthorizePath {
		return false
	}
	wait := s.cfg.Requests.TakeFor(s.cfg.Source(r), clientIDOf(r), s.now())
	if wait <= 0 {
		return false
	}
	ratelimit.RetryAfter(w.Header(), wait)
	oauthError(w, http.StatusTooManyRequests, "temporarily_unavailable", "too many requests from this address or for this client: try again later")
	return true
}

// clientIDOf is the client id a request names: an authorization
// request's in its query (left unparsed into r.Form, which intercept
// still edits), a token or revocation request's in HTTP Basic (RFC 6749
// 2.3.1, form-encoded) or else in its form.
func clientIDOf(r *http.Request) string {
	if r.URL.Path == AuthorizePath {
		return r.URL.Query().Get("client_id")
	}
	if user, _, ok := r.BasicAuth(); ok {
		if id, err := url.QueryUnescape(user); err == nil {
			return id
		}
		return user
	}
	if err := r.ParseForm(); err != nil {
		return ""
	}
	return r.Form.Get("client_id")
}

// sameResource compares resource URLs as RFC 8707 names them: exactly,
// except for a trailing slash some clients add.
func sameResource(a, b string) bool {
	trim := func(s string) string {
		if u, err := url.Parse(s); err == nil && u.Path != "/" {
			u.Path = trimSlash(u.Path)
			return u.String()
		}
		return s
	}
	return trim(a) == trim(b)
}

func trimSlash(p string) string {
	for len(p) > 1 && p[len(p)-1] == '/' {
		p = p[:len(p)-1]
	}
	return p
}

func contextWithResource(r *http.Request, resource string) context.Context {
	return context.WithValue(r.Context(), resourceKey{}, resource)
}

// oauthError answers an RFC 6749 error as JSON.
func oauthError(w http.ResponseWriter, status int, code, description string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": code, "error_description": description})
}

// tokenCall is what the token endpoint's interceptor shares, through
// the request's context, with the storage op calls for the request.
type tokenCall struct {
	verifier string // the code_verifier presented (proves a code's replay)
	fault    bool   // the store failed (markFault)
}

type tokenCallKey struct{}

func tokenCallOf(ctx context.Context) *tokenCall {
	if c, ok := ctx.Value(tokenCallKey{}).(*tokenCall); ok {
		return c
	}
	return &tokenCall{}
}

// markFault tells the token endpoint's faultWriter that the store failed
// while op read what the request presents.
func markFault(ctx context.Context) { tokenCallOf(ctx).fault = true }

// faultWriter answers a 500 server_error in place of op's error when the
// store failed during the request (markFault): op answers every error of
// a code's redemption or a refresh token's read invalid_grant, which makes
// a client drop what it holds, and its handlers offer no other way to say
// otherwise (op.StatusError is honoured only behind its Server interface,
// which would move every endpoint onto op's other code path).
type faultWriter struct {
	http.ResponseWriter
	call     *tokenCall
	replaced bool
}

func (w *faultWriter) WriteHeader(status int) {
	if w.call.fault && status >= http.StatusBadRequest && !w.replaced {
		w.replaced = true
		oauthError(w.ResponseWriter, http.StatusInternalServerError, "server_error", "the server could not read its grants: try again later")
		return
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *faultWriter) Write(b []byte) (int, error) {
	if w.replaced {
		return len(b), nil
	}
	return w.ResponseWriter.Write(b)
}

// issWriter adds RFC 9207's iss to the error redirects op sends from the
// authorization endpoint to the client, which carry none: the metadata
// says every authorization response carries it (errors too, RFC 9207
// section 2), and a client that checks it refuses a response without it
// before reading the error. (The consent page's answers add their own.)
type issWriter struct {
	http.ResponseWriter
	issuer string
}

func (w issWriter) WriteHeader(status int) {
	h := w.Header()
	if loc := h.Get("Location"); loc != "" && status >= 300 && status < 400 {
		if u, err := url.Parse(loc); err == nil && u.Query().Has("error") {
			h.Set("Location", withQuery(loc, url.Values{"iss": {w.issuer}}))
		}
	}
	w.ResponseWriter.WriteHeader(status)
}
