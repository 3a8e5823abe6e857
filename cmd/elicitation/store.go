package main

// The local server's stores (the embedded bbolt store in the data
// directory, or a DynamoDB table) and the API keys beside either, and its
// SES senders: AWS clients from the AWS SDK's usual configuration
// (config.LoadDefaultConfig, which links the SSO, SSO-OIDC, STS, sign-in
// and shared-file credential chain). The Lambda functions build theirs from the Lambda
// environment (lambdaconfig) instead, and the proxy opens its store with
// compose/embeddedstore, which links no AWS SDK package.

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/mcp-elicitation/elicitation/internal/apikey"
	"github.com/mcp-elicitation/elicitation/internal/apikey/dynamokeys"
	"github.com/mcp-elicitation/elicitation/internal/boltstore"
	"github.com/mcp-elicitation/elicitation/internal/compose"
	"github.com/mcp-elicitation/elicitation/internal/compose/embeddedstore"
	"github.com/mcp-elicitation/elicitation/internal/dynamostore"
	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/grant"
	"github.com/mcp-elicitation/elicitation/internal/notify"
	"github.com/mcp-elicitation/elicitation/internal/notify/sesmail"
)

// openStore opens the store s names ("bolt" or "dynamodb"): the
// server's compose.Parts.Store and the operator commands'. A bolt store
// is an io.Closer.
func openStore(ctx context.Context, s Config) (elicitation.Store, error) {
	if s.Store == "dynamodb" {
		client, err := newDynamoDB(ctx)
		if err != nil {
			return nil, err
		}
		if s.CreateTable {
			if err := dynamostore.CreateTable(ctx, client, s.Table); err != nil {
				return nil, fmt.Errorf("create table %s: %w", s.Table, err)
			}
		}
		return dynamostore.New(client, s.Table, dynamostore.Options{}), nil
	}
	return embeddedstore.Open(ctx, s)
}

// openAPIKeys opens where API keys are kept: a file in the data directory
// beside the embedded store, or the DynamoDB table.
func openAPIKeys(ctx context.Context, s Config) (apikey.Store, error) {
	if s.Store == "dynamodb" {
		client, err := newDynamoDB(ctx)
		if err != nil {
			return nil, err
		}
		return dynamokeys.New(client, s.Table), nil
	}
	return embeddedstore.APIKeys(ctx, s)
}

// newDynamoDB returns a DynamoDB client configured from the usual AWS
// environment (AWS_REGION, the credential chain, AWS_ENDPOINT_URL_DYNAMODB
// for DynamoDB Local), with the store's retry policy and HTTP client.
func newDynamoDB(ctx context.Context) (*dynamodb.Client, error) {
	cfg, err := config.LoadDefaultConfig(ctx,
		config.WithRetryer(dynamostore.Retryer),
		config.WithHTTPClient(dynamostore.HTTPClient()),
	)
	if err != nil {
		return nil, fmt.Errorf("load AWS configuration: %w", err)
	}
	return dynamodb.NewFromConfig(cfg), nil
}

// sesFromAWS is notifypart.SES for the local server: SES clients from the
// usual AWS configuration (the credential chain, AWS_REGION unless region
// is set).
func sesFromAWS(ctx context.Context, region string) (func(from string, to []string, configurationSet string) notify.Sender, error) {
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("load the AWS configuration for SES: %w", err)
	}
	return sesmail.FromConfig(cfg)(ctx, region)
}

// openGrants returns the opener of the authorization server's grant store
// in the app's store: the embedded store's own bucket, or the table.
func openGrants(now func() time.Time) func(a *compose.App) (grant.Store, error) {
	return func(a *compose.App) (grant.Store, error) {
		switch st := a.Store.(type) {
		case *boltstore.Store:
			return st.Grants(now), nil
		case *dynamostore.Store:
			return st.Grants(now), nil
		}
		return nil, fmt.Errorf("OAuth: no grant store in a store of type %T", a.Store)
	}
}
