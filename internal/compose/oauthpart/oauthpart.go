// Package oauthpart composes a deployment's authorization server for MCP
// clients (internal/authserver) from its settings: the grant store its
// binary opens, the clients (internal/clientreg), the signing keys
// derived from the page-token keyring, the public base and the MCP
// endpoint's URL; and puts its routes on the review listener, the
// consent page behind reviewer sign-in. It is apart from compose so that
// only the binaries serving OAuth link the OAuth server.
package oauthpart

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/authserver"
	"github.com/mcp-elicitation/elicitation/internal/clientreg"
	"github.com/mcp-elicitation/elicitation/internal/compose"
	"github.com/mcp-elicitation/elicitation/internal/grant"
	"github.com/mcp-elicitation/elicitation/internal/ratelimit"
	"github.com/mcp-elicitation/elicitation/internal/signing"
)

// Server is a deployment's authorization server and the registry of its
// clients.
type Server struct {
	*authserver.Server
	Clients *clientreg.Registry
	// Keys is the deployment's signing keyring, published at
	// signing.JWKSPath by the binary (with or without OAuth).
	Keys []signing.Key
}

// Options are what the binary decides.
type Options struct {
	// Grants opens the grant store of the app's store (bolt's or
	// DynamoDB's). Required.
	Grants func(a *compose.App) (grant.Store, error)
	// Resource returns the MCP endpoint's URL for a request; nil: the
	// public base + /mcp (one listener, or a stack behind one URL).
	Resource func(r *http.Request) string
	// Documents configures client ID metadata documents (tests let
	// loopback documents through).
	Documents clientreg.DocumentOptions
	// Source names the source of a registration, an authorization, a
	// token or a revocation request for their limits; nil: the remote
	// address (ratelimit.RemoteIP).
	Source func(*http.Request) string
}

// Once returns a function that builds a's authorization server once,
// whoever asks first (the MCP endpoint, for Verify; the review routes,
// for the endpoints), so both share one.
func Once(o Options) func(ctx context.Context, a *compose.App) (*Server, error) {
	var (
		mu  sync.Mutex
		srv *Server
	)
	return func(ctx context.Context, a *compose.App) (*Server, error) {
		mu.Lock()
		defer mu.Unlock()
		if srv != nil {
			return srv, nil
		}
		s, err := build(ctx, a, o)
		if err != nil {
			return nil, err
		}
		srv = s
		return srv, nil
	}
}

func build(ctx context.Context, a *compose.App, o Options) (*Server, error) {
	s := a.Settings
	if !s.OAuthOn() {
		return nil, fmt.Errorf("%s: OAuth is off", compose.Env("oauth"))
	}
	grants, err := o.Grants(a)
	if err != nil {
		return nil, fmt.Errorf("OAuth: open the grant store: %w", err)
	}
	operator, err := operatorClients(s.OAuthClients)
	if err != nil {
		return nil, err
	}
	signer, err := a.SigningKeys(ctx)
	if err != nil {
		return nil, fmt.Errorf("OAuth: %w", err)
	}
	if signer == nil {
		return nil, fmt.Errorf("OAuth: no signing keys: set %s (or --token-keys)", compose.Env("token-secret-arn"))
	}
	clients, err := clientreg.New(clientreg.Config{Store: grants, Operator: operator, Documents: o.Documents, Source: o.Source, Now: a.Now, Logger: a.Log})
	if err != nil {
		return nil, fmt.Errorf("OAuth clients: %w", err)
	}
	base := func(r *http.Request) string { return compose.ReviewBase(s.PublicURL, r) }
	as, err := authserver.New(authserver.Config{
		Store: grants,
		Clients: func(ctx context.Context, id string) (authserver.Client, error) {
			c, err := clients.Lookup(ctx, id)
			if clientreg.Unknown(err) {
				return authserver.Client{}, fmt.Errorf("%w: %w", authserver.ErrUnknownClient, err)
			}
			if err != nil {
				return authserver.Client{}, err
			}
			return authserver.Client{ID: c.ID, Name: c.Name, RedirectURIs: c.RedirectURIs, AuthMethod: c.AuthMethod, CheckSecret: c.CheckSecret, Refresh: c.HasGrant(clientreg.GrantRefreshToken)}, nil
		},
		Keys:     signer,
		Base:     base,
		Resource: o.Resource,
		Insecure: insecure(s.PublicURL),
		// The setting's 0 (no cache) is authserver's negative.
		RevocationCacheTTL: cmp.Or(s.OAuthRevocationCacheTTL, -1),
		Requests:           requestLimit(s),
		Source:             o.Source,
		Now:                a.Now,
		Logger:             a.Log,
	})
	if err != nil {
		return nil, err
	}
	return &Server{Server: as, Clients: clients, Keys: signer}, nil
}

// requestLimit is --oauth-requests-per-source, --oauth-requests-per-client
// and --oauth-requests as authserver.Config.Requests; nil (authserver's
// defaults) for settings that did not come through their rows (a test's
// literal).
func requestLimit(s compose.Settings) *ratelimit.Limiter {
	perSource := ratelimit.Rate{Count: s.OAuthRequestsPerSource, Per: time.Hour}
	perClient := ratelimit.Rate{Count: s.OAuthRequestsPerClient, Per: time.Hour}
	all := ratelimit.Rate{Count: s.OAuthRequests, Per: time.Hour}
	if !perSource.Valid() || !perClient.Valid() || !all.Valid() {
		return nil
	}
	return ratelimit.New(perSource, all, maxSources).PerClient(perClient)
}

// maxSources is how many sources and clients the request limit tracks
// at once (the least recently seen forgotten first).
const maxSources = 10000

// insecure: a plain-http public URL, which reviewer sign-in allows on
// loopback only.
func insecure(publicURL string) bool {
	u, err := url.Parse(publicURL)
	return publicURL == "" || (err == nil && u.Scheme == "http")
}

// Routes puts the server's endpoints on mux, the consent page behind
// signIn (reviewer sign-in, which signs the person in first). The key set
// (signing.JWKSPath) is not among them: the binary publishes it whether
// OAuth is on or not.
func (s *Server) Routes(mux *http.ServeMux, signIn func(http.Handler) http.Handler) {
	h := s.Handler(s.Clients.RegisterHandler())
	for _, p := range authserver.Paths() {
		if p == authserver.ConsentPath {
			mux.Handle(p, signIn(h))
			continue
		}
		mux.Handle(p, h)
	}
}

// operatorClients reads --oauth-clients: a JSON array of clients, or a
// file holding one.
func operatorClients(v string) ([]clientreg.Client, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return nil, nil
	}
	b := []byte(v)
	if v[0] != '[' {
		var err error
		if b, err = os.ReadFile(v); err != nil {
			return nil, fmt.Errorf("--oauth-clients: %w", err)
		}
	}
	var cs []clientreg.Client
	if err := json.Unmarshal(b, &cs); err != nil {
		return nil, fmt.Errorf("--oauth-clients: want a JSON array of clients: %w", err)
	}
	return cs, nil
}
