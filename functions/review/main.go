// Command review is the review Lambda function: the review page at GET
// /review/{id}/{key}, signing per-render tokens with the keyring it reads
// from Secrets Manager at start-up, on API Gateway HTTP API payload 2.0. It
// writes audit entries, never decisions (its IAM policy forbids them).
// internal/lambdaconfig documents the environment.
package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/mcp-elicitation/elicitation/internal/lambdaconfig"
	"github.com/mcp-elicitation/elicitation/internal/review"
)

func main() {
	env, err := lambdaconfig.FromEnv(os.Getenv)
	log := env.Logger()
	exitIf(log, err)
	keys, err := lambdaconfig.Keyring(context.Background(), env)
	exitIf(log, err)
	templates := review.NewTemplateChecker()
	svc := lambdaconfig.Service(env, lambdaconfig.DynamoDB(env), templates)
	pages := review.New(review.Options{Service: svc, Tokens: keys, Logger: log, Now: svc.Now, Templates: templates})
	lambda.Start(httpadapter.NewV2(lambdaconfig.Route("GET /review/{id}/{key}", pages.PageHandler())).ProxyWithContext)
}

func exitIf(log *slog.Logger, err error) {
	if err != nil {
		log.Error("review function cannot start", "err", err)
		os.Exit(1)
	}
}
