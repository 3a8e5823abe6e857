package main

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/mcp-elicitation/elicitation/internal/conformancetest"
	"github.com/mcp-elicitation/elicitation/internal/reviewauth/oidctest"
	"github.com/mcp-elicitation/elicitation/internal/testenv"
)

// TestConformanceAuthorization runs the official suite's
// authorization-server scenarios (`conformance authorization`: the RFC
// 8414 metadata, then the authorization code grant with PKCE and the
// resource) against the local server with --oauth. The client is
// registered through /oauth/register for the suite's callback; alice
// signs in at the real provider and consents when the suite prints the
// URL, and the browser lands on the suite's callback, which redeems the
// code.
func TestConformanceAuthorization(t *testing.T) {
	testenv.Slow(t, "MCP conformance")
	t.Parallel()
	m, base := startOAuth(t)
	port := testenv.FreePort(t)
	const name = "MCP conformance suite"
	clientID := registerPublic(t, base, name, conformancetest.CallbackURL(port))
	browser := oidctest.Browser(t)
	conformancetest.RunAuthorization(t, conformancetest.AuthorizationServer{
		Issuer: base, ClientID: clientID, Resource: m.MCPURL, Port: port,
		Browse: func(ctx context.Context, authURL string) error {
			resp, body, err := allowAsAlice(ctx, browser, authURL, base, name)
			if err != nil {
				return err
			}
			if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Request.URL.String(), conformancetest.CallbackURL(port)+"?") {
				return fmt.Errorf("the browser ended at %s (HTTP %d), not the suite's callback: %.500s", resp.Request.URL, resp.StatusCode, body)
			}
			return nil
		},
	}, nil)
}
