// Command submit is the submission Lambda function: POST
// /review/{id}/{key} (and POST /review/{id}, the page a signed-in reviewer
// opens without the key) checks the page token and the submission and lands
// the decision exactly once, on API Gateway HTTP API payload 2.0. It reads the
// page-token keyring from Secrets Manager at start-up.
// internal/compose documents the settings (ELICITATION_*),
// internal/lambdaconfig the AWS environment.
package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/mcp-elicitation/elicitation/internal/compose"
	"github.com/mcp-elicitation/elicitation/internal/compose/notifypart"
	"github.com/mcp-elicitation/elicitation/internal/compose/signin"
	"github.com/mcp-elicitation/elicitation/internal/lambdaconfig"
)

func main() {
	s, env, err := lambdaconfig.FromEnv(os.Getenv)
	log := s.Logger(os.Stderr, true)
	exitIf(log, err)
	app, err := compose.Build(context.Background(), s, compose.Parts{
		Log: log, Store: lambdaconfig.Store(lambdaconfig.PageDynamoDB(env)), Secret: lambdaconfig.Secret(env), Pages: compose.Pages,
		Notify: notifypart.RoutingPart,
	})
	exitIf(log, err)
	signIn, err := signin.Middleware(app, lambdaconfig.Secret(env))
	exitIf(log, err)
	lambda.Start(httpadapter.NewV2(lambdaconfig.Route("POST /review/", signIn(app.Pages.SubmitHandler()))).ProxyWithContext)
}

func exitIf(log *slog.Logger, err error) {
	if err != nil {
		log.Error("submit function cannot start", "err", err)
		os.Exit(1)
	}
}
