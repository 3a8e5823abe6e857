package dynamostore

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
)

// Retry policy: enough attempts to ride out a burst of throttling, short
// enough backoff to stay inside a Lambda invocation. Every wait between
// attempts ends with the call's context, so retries never outlive the
// caller's deadline.
const (
	RetryMaxAttempts = 5
	RetryMaxBackoff  = 2 * time.Second
	RetryBaseDelay   = 25 * time.Millisecond
	// AttemptTimeout bounds how long one attempt waits for the response
	// headers before it is abandoned and retried (a stalled connection).
	AttemptTimeout = 5 * time.Second
)

// Retryer is the retry policy the store is meant to run with: the SDK's
// standard retryer (throttling, 5xx and connection errors) with the limits
// above.
func Retryer() aws.Retryer {
	return retry.NewStandard(func(o *retry.StandardOptions) {
		o.MaxAttempts = RetryMaxAttempts
		o.MaxBackoff = RetryMaxBackoff
		o.BaseDelay = RetryBaseDelay
	})
}

// HTTPClient is the HTTP client the store is meant to run with: the SDK's
// default, with a bound on each attempt's wait for a response.
func HTTPClient() *awshttp.BuildableClient {
	return awshttp.NewBuildableClient().WithTransportOptions(func(tr *http.Transport) {
		tr.ResponseHeaderTimeout = AttemptTimeout
	})
}

// CreateTable creates table with the layout the store needs (string keys
// pk and sk, the keys-only retention index, the inbox's pending index, the
// owners' index, on-demand billing, a keys-only stream), waits until
// it is active and enables TTL on the ttl attribute. It is for tests and
// for the local server's --create-table flag; on AWS the SAM template makes
// the same table. An existing table is left as it is.
func CreateTable(ctx context.Context, client *dynamodb.Client, table string) error {
	_, err := client.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:   aws.String(table),
		BillingMode: types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{
			{AttributeName: aws.String(attrPK), AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: aws.String(attrSK), AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: aws.String(attrRetainShard), AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: aws.String(attrRetainUntil), AttributeType: types.ScalarAttributeTypeN},
			{AttributeName: aws.String(attrPendingPK), AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: aws.String(attrExpiresAt), AttributeType: types.ScalarAttributeTypeN},
			{AttributeName: aws.String(attrOwnedPK), AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: aws.String(attrCreatedAt), AttributeType: types.ScalarAttributeTypeN},
		},
		KeySchema: []types.KeySchemaElement{
			{AttributeName: aws.String(attrPK), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String(attrSK), KeyType: types.KeyTypeRange},
		},
		// The indexes as template.yaml makes them too.
		GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{
			index(retainIndex, attrRetainShard, attrRetainUntil, types.Projection{ProjectionType: types.ProjectionTypeKeysOnly}),
			index(pendingIndex, attrPendingPK, attrExpiresAt, types.Projection{ProjectionType: types.ProjectionTypeInclude, NonKeyAttributes: []string{
				attrID, attrKind, attrOwner, attrCreatedAt, attrApprovals, attrApprovers, attrHeadline, attrReviewers,
			}}),
			index(ownedIndex, attrOwnedPK, attrCreatedAt, types.Projection{ProjectionType: types.ProjectionTypeAll}),
		},
		// The notify function reads new outbox items from the stream
		// (keys only: it reads each item back).
		StreamSpecification: &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeKeysOnly},
	})
	var inUse *types.ResourceInUseException
	if errors.As(err, &inUse) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("create table %s: %w", table, err)
	}
	w := dynamodb.NewTableExistsWaiter(client, func(o *dynamodb.TableExistsWaiterOptions) {
		o.MinDelay = 100 * time.Millisecond
		o.MaxDelay = 2 * time.Second
	})
	if err := w.Wait(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)}, 2*time.Minute); err != nil {
		return fmt.Errorf("create table %s: wait until active: %w", table, err)
	}
	if err := SetTTL(ctx, client, table, true); err != nil {
		return fmt.Errorf("create table %s: %w", table, err)
	}
	return nil
}

// index is the global secondary index name, keyed by hash and sort, that
// projects p.
func index(name, hash, sort string, p types.Projection) types.GlobalSecondaryIndex {
	return types.GlobalSecondaryIndex{
		IndexName: aws.String(name),
		KeySchema: []types.KeySchemaElement{
			{AttributeName: aws.String(hash), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String(sort), KeyType: types.KeyTypeRange},
		},
		Projection: &p,
	}
}

// SetTTL turns DynamoDB's TTL on the table's ttl attribute (the end of
// retention) on or off; a TTL already so is left as it is. CreateTable
// turns it on; the tests turn it off where they write on a clock other
// than the wall clock.
func SetTTL(ctx context.Context, client *dynamodb.Client, table string, on bool) error {
	_, err := client.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{
		TableName: aws.String(table),
		TimeToLiveSpecification: &types.TimeToLiveSpecification{
			AttributeName: aws.String(attrTTL), Enabled: aws.Bool(on),
		},
	})
	var api smithy.APIError
	if errors.As(err, &api) && api.ErrorCode() == "ValidationException" && strings.HasPrefix(api.ErrorMessage(), "TimeToLive is already") {
		return nil
	}
	if err != nil {
		return fmt.Errorf("set TTL on %s to %v: %w", table, on, err)
	}
	return nil
}
