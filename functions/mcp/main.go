// Command mcp is the MCP Lambda function: the elicitation tools over
// streamable HTTP (stateless, JSON responses) at /mcp, behind bearer API
// keys and, with OAuth on, the access tokens functions/oauth issues, on
// API Gateway HTTP API payload 2.0. Each elicit_await ends before
// the invocation's deadline, which ProxyWithContext passes on in the
// request's context. internal/compose documents the settings
// (ELICITATION_*), internal/lambdaconfig the AWS environment.
package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/mcp-elicitation/elicitation/internal/accesstoken"
	"github.com/mcp-elicitation/elicitation/internal/apikey"
	"github.com/mcp-elicitation/elicitation/internal/apikey/dynamokeys"
	"github.com/mcp-elicitation/elicitation/internal/compose"
	"github.com/mcp-elicitation/elicitation/internal/compose/mcpendpoint"
	"github.com/mcp-elicitation/elicitation/internal/compose/notifypart"
	"github.com/mcp-elicitation/elicitation/internal/compose/oauthpart"
	"github.com/mcp-elicitation/elicitation/internal/lambdaconfig"
)

func main() {
	s, env, err := lambdaconfig.FromEnv(os.Getenv)
	log := s.Logger(os.Stderr, true)
	exitIf(log, err)
	db := lambdaconfig.DynamoDB(env)
	app, err := compose.Build(context.Background(), s, compose.Parts{
		Log: log, Metrics: compose.EMF(s, os.Stdout), Store: lambdaconfig.Store(db), Secret: lambdaconfig.Secret(env), MCP: mcpendpoint.Part(dynamoKeys(db), oauth()),
		Notify: notifypart.RoutingPart,
	})
	exitIf(log, err)
	lambda.Start(httpadapter.NewV2(lambdaconfig.Route("/mcp", app.MCP)).ProxyWithContext)
}

// dynamoKeys opens the API keys kept in the settings' table, through db.
// It is here, not in internal/lambdaconfig, because the review and submit
// functions link that package and must not link the MCP SDK, which
// internal/apikey's bearer check imports.
func dynamoKeys(db *dynamodb.Client) func(context.Context, compose.Settings) (apikey.Store, error) {
	return func(_ context.Context, s compose.Settings) (apikey.Store, error) {
		return dynamokeys.New(db, s.Table), nil
	}
}

// oauth opens the deployment's authorization server when the settings
// take OAuth tokens: the MCP function only verifies them (the signature
// with the keys derived from the page-token keyring, the token's family
// read at most once per --oauth-revocation-cache-ttl); functions/oauth
// issues them.
func oauth() func(context.Context, *compose.App) (accesstoken.Verifier, error) {
	open := oauthpart.Once(oauthpart.Options{Grants: lambdaconfig.Grants})
	return func(ctx context.Context, a *compose.App) (accesstoken.Verifier, error) {
		s, err := open(ctx, a)
		if err != nil {
			return nil, err
		}
		return s.Server, nil
	}
}

func exitIf(log *slog.Logger, err error) {
	if err != nil {
		log.Error("mcp function cannot start", "err", err)
		os.Exit(1)
	}
}
