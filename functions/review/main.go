// Command review is the review Lambda function: the review page at GET
// /review/{id}/{key} (and, for a signed-in reviewer who may decide, at GET
// /review/{id} without the key), the signed-in reviewer's inbox at GET
// /review/, the sign-in callback, and the deployment's key set at GET
// /.well-known/jwks.json (the public halves of the signing keys derived
// from the keyring, which verify the MCP function's receipts), signing
// per-render tokens with the keyring it reads from Secrets Manager at
// start-up, on API Gateway HTTP API payload 2.0. It writes audit entries, never decisions (its IAM
// policy forbids them).
// internal/compose documents the settings (ELICITATION_*),
// internal/lambdaconfig the AWS environment.
package main

import (
	"context"
	"log/slog"
	"net/http"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/mcp-elicitation/elicitation/internal/compose"
	"github.com/mcp-elicitation/elicitation/internal/compose/signin"
	"github.com/mcp-elicitation/elicitation/internal/lambdaconfig"
	"github.com/mcp-elicitation/elicitation/internal/signing"
)

func main() {
	s, env, err := lambdaconfig.FromEnv(os.Getenv)
	log := s.Logger(os.Stderr, true)
	exitIf(log, err)
	app, err := compose.Build(context.Background(), s, compose.Parts{
		Log: log, Metrics: compose.EMF(s, os.Stdout), Store: lambdaconfig.Store(lambdaconfig.PageDynamoDB(env)), Secret: lambdaconfig.Secret(env), Pages: compose.Pages,
	})
	exitIf(log, err)
	signIn, err := signin.Middleware(app, lambdaconfig.Secret(env))
	exitIf(log, err)
	keys, err := app.SigningKeys(context.Background())
	exitIf(log, err)
	mux := http.NewServeMux()
	mux.Handle("GET "+signing.JWKSPath, signing.Handler(keys))
	// Every other GET the gateway routes here (/review, /review/{id},
	// /review/{id}/{key}): the page handler reads the path itself.
	mux.Handle("GET /", signIn(app.Pages.PageHandler()))
	lambda.Start(httpadapter.NewV2(lambdaconfig.Route("/", mux)).ProxyWithContext)
}

func exitIf(log *slog.Logger, err error) {
	if err != nil {
		log.Error("review function cannot start", "err", err)
		os.Exit(1)
	}
}
