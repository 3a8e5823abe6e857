package main

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/config"

	"github.com/mcp-elicitation/elicitation/internal/notify"
	"github.com/mcp-elicitation/elicitation/internal/notify/sesmail"
)

// sesFromAWS is notify.SES for the local server: SES clients from the
// usual AWS configuration (the credential chain, AWS_REGION unless region
// is set). config.LoadDefaultConfig lives here, on the local side, so that
// the notify function (whose client lambdaconfig builds from the Lambda
// environment) does not link the SSO, STS and shared-file credential chain.
func sesFromAWS(ctx context.Context, region string) (func(from string, to []string, configurationSet string) notify.Sender, error) {
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("load the AWS configuration for SES: %w", err)
	}
	return sesmail.FromConfig(cfg)(ctx, region)
}
