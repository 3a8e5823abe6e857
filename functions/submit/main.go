// Command submit is the submission Lambda function: POST
// /review/{id}/{key} (and POST /review/{id}, the page a signed-in reviewer
// opens without the key) checks the page token and the submission and lands
// the decision exactly once, on API Gateway HTTP API payload 2.0; with a
// Slack app (ELICITATION_SLACK_SECRET_ARN), POST /slack/interactions takes
// the decisions made with a Slack message's buttons through the same path.
// It reads the page-token keyring and the Slack secret from Secrets Manager
// at start-up.
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
	"github.com/mcp-elicitation/elicitation/internal/compose/notifypart"
	"github.com/mcp-elicitation/elicitation/internal/compose/signin"
	"github.com/mcp-elicitation/elicitation/internal/compose/slackpart"
	"github.com/mcp-elicitation/elicitation/internal/lambdaconfig"
)

func main() {
	s, env, err := lambdaconfig.FromEnv(os.Getenv)
	log := s.Logger(os.Stderr, true)
	exitIf(log, err)
	app, err := compose.Build(context.Background(), s, compose.Parts{
		Log: log, Metrics: compose.EMF(s, os.Stdout), Store: lambdaconfig.Store(lambdaconfig.PageDynamoDB(env)), Secret: lambdaconfig.Secret(env), Pages: compose.Pages,
		Notify: notifypart.RoutingPart,
	})
	exitIf(log, err)
	signIn, err := signin.Middleware(app, lambdaconfig.Secret(env))
	exitIf(log, err)
	slack, err := slackpart.Handler(context.Background(), app)
	exitIf(log, err)
	mux := http.NewServeMux()
	mux.Handle("POST /review/", signIn(app.Pages.SubmitHandler()))
	if slack != nil {
		mux.Handle("POST "+slackpart.Path, slack)
	}
	lambda.Start(httpadapter.NewV2(lambdaconfig.Route("/", mux)).ProxyWithContext)
}

func exitIf(log *slog.Logger, err error) {
	if err != nil {
		log.Error("submit function cannot start", "err", err)
		os.Exit(1)
	}
}
