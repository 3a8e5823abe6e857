package dynamotest

import (
	"context"
	"fmt"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	streamtypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
)

// Stream reads a table's stream from DynamoDB Local's Streams API as
// Lambda's event source mapping hands it to a function: each record as an
// events.DynamoDBEventRecord (the keys of a KEYS_ONLY stream), shard by
// shard from the start (TRIM_HORIZON), each record once.
type Stream struct {
	c     *dynamodbstreams.Client
	arn   *string
	iters map[string]*string // shard id -> where the next read starts; nil once the shard is closed and read
}

// OpenStream opens the one stream of table at the endpoint Main set up.
// It fails t if the table has no stream or the stream is not KEYS_ONLY
// (what template.yaml and dynamostore.CreateTable give it).
func OpenStream(t testing.TB, table string) *Stream {
	t.Helper()
	ctx := context.Background()
	c := dynamodbstreams.New(dynamodbstreams.Options{
		Region: "us-east-1", BaseEndpoint: aws.String(Endpoint(t)),
		Credentials: credentials.NewStaticCredentialsProvider("dummy", "dummy", ""),
	})
	ls, err := c.ListStreams(ctx, &dynamodbstreams.ListStreamsInput{TableName: aws.String(table)})
	if err != nil || len(ls.Streams) != 1 {
		t.Fatalf("ListStreams(%s) = %+v, %v; want the table's one stream (StreamSpecification)", table, ls, err)
	}
	s := &Stream{c: c, arn: ls.Streams[0].StreamArn, iters: map[string]*string{}}
	ds, err := c.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: s.arn})
	if err != nil {
		t.Fatal(err)
	}
	if v := ds.StreamDescription.StreamViewType; v != streamtypes.StreamViewTypeKeysOnly {
		t.Errorf("stream view %s, want KEYS_ONLY", v)
	}
	return s
}

// Read returns the records written since the last Read (all of them, the
// first time), shard by shard, each shard's in order; none when the stream
// is caught up.
func (s *Stream) Read(ctx context.Context) ([]events.DynamoDBEventRecord, error) {
	ds, err := s.c.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: s.arn})
	if err != nil {
		return nil, fmt.Errorf("describe the stream: %w", err)
	}
	var recs []events.DynamoDBEventRecord
	for _, sh := range ds.StreamDescription.Shards {
		id := aws.ToString(sh.ShardId)
		iter, seen := s.iters[id]
		if !seen {
			it, err := s.c.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{StreamArn: s.arn, ShardId: sh.ShardId, ShardIteratorType: streamtypes.ShardIteratorTypeTrimHorizon})
			if err != nil {
				return nil, fmt.Errorf("shard %s: %w", id, err)
			}
			iter = it.ShardIterator
		}
		for iter != nil {
			out, err := s.c.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: iter})
			if err != nil {
				return nil, fmt.Errorf("shard %s: %w", id, err)
			}
			for _, r := range out.Records {
				recs = append(recs, s.record(r))
			}
			if len(out.Records) == 0 && out.NextShardIterator != nil {
				// DynamoDB Local keeps an open shard's iterator: caught up;
				// the next Read goes on from here.
				iter = out.NextShardIterator
				break
			}
			iter = out.NextShardIterator
		}
		s.iters[id] = iter
	}
	return recs, nil
}

func (s *Stream) record(r streamtypes.Record) events.DynamoDBEventRecord {
	keys := map[string]events.DynamoDBAttributeValue{}
	for k, v := range r.Dynamodb.Keys {
		if sv, ok := v.(*streamtypes.AttributeValueMemberS); ok {
			keys[k] = events.NewStringAttribute(sv.Value)
		}
	}
	return events.DynamoDBEventRecord{
		AWSRegion: aws.ToString(r.AwsRegion), EventID: aws.ToString(r.EventID), EventName: string(r.EventName),
		EventSource: aws.ToString(r.EventSource), EventVersion: aws.ToString(r.EventVersion), EventSourceArn: aws.ToString(s.arn),
		Change: events.DynamoDBStreamRecord{Keys: keys, SequenceNumber: aws.ToString(r.Dynamodb.SequenceNumber), StreamViewType: string(r.Dynamodb.StreamViewType)},
	}
}
