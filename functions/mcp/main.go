// Command mcp is the MCP Lambda function: the elicitation tools over
// streamable HTTP (stateless, JSON responses) at /mcp, behind bearer API
// keys, on API Gateway HTTP API payload 2.0. Each elicit_await ends before
// the invocation's deadline, which ProxyWithContext passes on in the
// request's context. internal/lambdaconfig documents the environment.
package main

import (
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/mcp-elicitation/elicitation/internal/apikey"
	"github.com/mcp-elicitation/elicitation/internal/apikey/dynamokeys"
	"github.com/mcp-elicitation/elicitation/internal/lambdaconfig"
	"github.com/mcp-elicitation/elicitation/internal/mcptools"
	"github.com/mcp-elicitation/elicitation/internal/review"
)

func main() {
	env, err := lambdaconfig.FromEnv(os.Getenv)
	log := env.Logger()
	exitIf(log, err)
	db := lambdaconfig.DynamoDB(env)
	tools := mcptools.New(mcptools.Options{Service: lambdaconfig.Service(env, db, review.NewTemplateChecker()), Stateless: true, ReviewURL: env.ReviewURL, Logger: log, Version: env.Version})
	auth := apikey.Middleware(apikey.AuthOptions{Store: dynamokeys.New(db, env.Table), CacheTTL: env.APIKeyCacheTTL, Logger: log})
	lambda.Start(httpadapter.NewV2(lambdaconfig.Route("/mcp", auth(tools.Handler()))).ProxyWithContext)
}

func exitIf(log *slog.Logger, err error) {
	if err != nil {
		log.Error("mcp function cannot start", "err", err)
		os.Exit(1)
	}
}
