// Command oauth is the OAuth Lambda function: the deployment's
// authorization server for MCP clients (internal/authserver, composed by
// compose/oauthpart) at authserver.Paths() (authorize, token, revoke,
// keys, registration, the metadata and the consent page, behind reviewer
// sign-in), and the MCP endpoint's protected-resource metadata (RFC
// 9728), on API Gateway HTTP API payload 2.0. It signs tokens with the
// keys derived from the page-token keyring it reads from Secrets Manager
// at start-up, the same the MCP function verifies them with.
//
// It is a function of its own for least privilege: it alone writes the
// grant#* items (clients, logins, codes, token families), and it reads and
// writes nothing of requests, so the review function stays read-only on
// them and the MCP function only reads token families. internal/compose
// documents the settings (ELICITATION_*), internal/lambdaconfig the AWS
// environment.
package main

import (
	"context"
	"log/slog"
	"net/http"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/mcp-elicitation/elicitation/internal/authserver"
	"github.com/mcp-elicitation/elicitation/internal/compose"
	"github.com/mcp-elicitation/elicitation/internal/compose/oauthpart"
	"github.com/mcp-elicitation/elicitation/internal/compose/signin"
	"github.com/mcp-elicitation/elicitation/internal/lambdaconfig"
	"github.com/mcp-elicitation/elicitation/internal/ratelimit"
)

func main() {
	s, env, err := lambdaconfig.FromEnv(os.Getenv)
	log := s.Logger(os.Stderr, true)
	exitIf(log, err)
	ctx := context.Background()
	// Pages: the page-token keyring, which signs reviewer sessions and
	// from which the token-signing keys are derived; no page is served.
	app, err := compose.Build(ctx, s, compose.Parts{
		Log: log, Store: lambdaconfig.Store(lambdaconfig.PageDynamoDB(env)), Secret: lambdaconfig.Secret(env), Pages: compose.Pages,
	})
	exitIf(log, err)
	signIn, err := signin.Middleware(app, lambdaconfig.Secret(env))
	exitIf(log, err)
	as, err := oauthpart.Once(oauthpart.Options{
		Grants: lambdaconfig.Grants,
		// The caller's address as the gateway saw it, not the proxy's.
		Source: func(r *http.Request) string { return ratelimit.AddressSource(lambdaconfig.SourceIP(r)) },
	})(ctx, app)
	exitIf(log, err)
	mux := http.NewServeMux()
	as.Routes(mux, signIn)
	prm := as.ResourceMetadata()
	mux.Handle(authserver.ResourceMetadataPath, prm)
	mux.Handle(authserver.ResourceMetadataPath+authserver.ResourcePath, prm)
	lambda.Start(httpadapter.NewV2(lambdaconfig.Route("/", mux)).ProxyWithContext)
}

func exitIf(log *slog.Logger, err error) {
	if err != nil {
		log.Error("oauth function cannot start", "err", err)
		os.Exit(1)
	}
}
