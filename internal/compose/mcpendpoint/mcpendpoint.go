// Package mcpendpoint is the MCP part of compose.Build: the elicitation
// tools (internal/mcptools) behind bearer API keys when the settings
// require them. It is its own package so that only the binaries serving
// /mcp link the MCP SDK.
package mcpendpoint

import (
	"context"
	"fmt"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/accesstoken"
	"github.com/mcp-elicitation/elicitation/internal/apikey"
	"github.com/mcp-elicitation/elicitation/internal/attest"
	"github.com/mcp-elicitation/elicitation/internal/compose"
	"github.com/mcp-elicitation/elicitation/internal/mcptools"
)

// Part returns compose.Parts.MCP for a deployment whose API keys apiKeys
// opens (read only when Settings.MCPAuth takes keys): embeddedstore.APIKeys or
// cmd/elicitation's openAPIKeys locally; on Lambda functions/mcp's DynamoDB
// opener. oauth returns the deployment's authorization server, called
// only when Settings.MCPAuth takes OAuth tokens (nil: a deployment without
// one refuses such settings).
func Part(apiKeys func(context.Context, compose.Settings) (apikey.Store, error), oauth func(context.Context, *compose.App) (accesstoken.Verifier, error)) func(context.Context, *compose.App) (http.Handler, error) {
	return func(ctx context.Context, a *compose.App) (http.Handler, error) {
		s := a.Settings
		opts := mcptools.Options{
			Service:   a.Service,
			Stateless: s.Stateless,
			ReviewURL: a.ReviewURL,
			OnCreated: a.OnCreated,
			Push:      s.Push,
			HostForm:  s.HostForm,
			App:       s.App,
			Logger:    a.Log,
			Version:   s.Version,
		}
		if s.Push || s.HostForm || s.App {
			keys, err := compose.StateKeys(ctx, a)
			if err != nil {
				return nil, err
			}
			if keys != nil {
				opts.Sealer = keys
			} else {
				a.Log.Info("no push-state keys: hosts without a session (protocol 2026-07-28) get the review URL in the result only", "setting", compose.Env("state-keys"))
			}
		}
		receipts, err := Receipts(ctx, a)
		if err != nil {
			return nil, err
		}
		opts.Receipts = receipts
		sessionLimits(&opts, s)
		opts.MaxWaits, opts.WaitsPerPrincipal = s.WaitLimits()
		opts.MaxWatches, opts.WatchesPerPrincipal = s.WatchLimits()
		tools := mcptools.New(opts)
		var h http.Handler = tools.Handler()
		keys, useOAuth := s.MCPAuth()
		if !keys && !useOAuth {
			return h, nil
		}
		o := apikey.AuthOptions{Logger: a.Log, CacheTTL: s.APIKeyCacheTTL}
		if keys {
			store, err := apiKeys(ctx, s)
			if err != nil {
				return nil, err
			}
			o.Store = store
		}
		if useOAuth {
			if oauth == nil {
				return nil, fmt.Errorf("%s: this deployment has no authorization server", compose.Env("oauth"))
			}
			as, err := oauth(ctx, a)
			if err != nil {
				return nil, err
			}
			withOAuth(&o, as)
		}
		return apikey.Middleware(o)(h), nil
	}
}

// SessionCap is the session cap of Part's endpoint from the same settings
// (--mcp-max-sessions, --mcp-sessions-per-principal, --mcp-session-idle,
// --max-body), for another MCP server's session handler: the proxy's
// --http listener.
func SessionCap(s compose.Settings) func(*mcp.Server, http.Handler) http.Handler {
	var o mcptools.Options
	sessionLimits(&o, s)
	return mcptools.CapSessions(o)
}

// sessionLimits sets the session limits of o from the settings, the same
// for Part's endpoint and SessionCap's.
func sessionLimits(o *mcptools.Options, s compose.Settings) {
	o.SessionIdle, o.MaxSessions, o.MaxBodyBytes = s.MCPLimits()
	o.SessionsPerPrincipal = s.SessionShare
}

// Receipts signs each result's approval receipt with the deployment's
// signing keyring (App.SigningKeys), its issuer the public URL (else the
// request's base, as review URLs are built); nil when the deployment has
// no keyring.
func Receipts(ctx context.Context, a *compose.App) (func(*http.Request, attest.Outcome) (string, error), error) {
	keys, err := a.SigningKeys(ctx)
	if err != nil {
		return nil, err
	}
	if keys == nil {
		a.Log.Info("no page-token keyring: results carry no signed receipt", "setting", compose.Env("token-secret-arn"))
		return nil, nil
	}
	is := attest.Issuer{Keys: keys, Now: a.Now}
	return func(r *http.Request, o attest.Outcome) (string, error) {
		return is.Issue(compose.ReviewBase(a.Settings.PublicURL, r), o)
	}, nil
}
