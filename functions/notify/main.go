// Command notify is the notification Lambda function. The table's stream
// (KEYS_ONLY, filtered to new outbox items) invokes it with each batch of
// new deliveries, which it sends at once; a schedule invokes it every
// minute to sweep for expiry notices and retries that have come due (a
// failed attempt backs off in the outbox: the stream retries nothing), and,
// first, for requests that expired (the metrics' expiry count, written as
// an embedded metric line, docs/operations.md). It reads the targets from
// ELICITATION_NOTIFY_CONFIG and their secrets from the Secrets Manager
// secret ELICITATION_NOTIFY_SECRET_ARN (docs/notifications.md).
package main

import (
	"context"
	"log/slog"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/mcp-elicitation/elicitation/internal/compose"
	"github.com/mcp-elicitation/elicitation/internal/compose/notifypart"
	"github.com/mcp-elicitation/elicitation/internal/lambdaconfig"
	"github.com/mcp-elicitation/elicitation/internal/notify/lambdanotify"
	"github.com/mcp-elicitation/elicitation/internal/notify/sesmail"
)

func main() {
	s, env, err := lambdaconfig.FromEnv(os.Getenv)
	log := s.Logger(os.Stderr, true)
	exitIf(log, err)
	app, err := compose.Build(context.Background(), s, compose.Parts{
		Log: log, Store: lambdaconfig.Store(lambdaconfig.DynamoDB(env)), Secret: lambdaconfig.Secret(env),
		Notify:  notifypart.Part(nil, sesmail.FromConfig(env.AWSConfig())),
		Metrics: compose.EMF(s, os.Stdout),
	})
	exitIf(log, err)
	sweep := compose.ExpirySweep(app)
	d := notifypart.Deliverer(app)
	if d == nil {
		log.Warn("no notification targets are configured (ELICITATION_NOTIFY_CONFIG): nothing to deliver")
		lambda.Start(func(ctx context.Context) error { return sweep(ctx) })
		return
	}
	d.Now = func() time.Time { return time.Now().UTC() }
	h := &lambdanotify.Handler{D: d, Log: log, Sweep: sweep}
	lambda.Start(h.Handle)
}

func exitIf(log *slog.Logger, err error) {
	if err != nil {
		log.Error("notify function cannot start", "err", err)
		os.Exit(1)
	}
}
