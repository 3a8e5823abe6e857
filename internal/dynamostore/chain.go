package dynamostore

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// chainAttempts bounds how often an audit write whose place in the chain
// another writer's entry took (between reading the head and writing)
// starts again. Busy trails (renders of a shared page) see more of these
// than of transaction conflicts, and losing one costs no decision.
const chainAttempts = 4 * conflictAttempts

// head reads the head of id's chained trail, strongly consistent: the last
// chained entry's Seq and Hash (zero when there is none).
func (s *Store) head(ctx context.Context, id string) (elicitation.AuditHead, error) {
	var h elicitation.AuditHead
	err := s.each(ctx, &dynamodb.QueryInput{
		KeyConditionExpression:    aws.String("#pk = :pk AND begins_with(#sk, :chained)"),
		ExpressionAttributeNames:  names(attrPK, attrSK),
		ExpressionAttributeValues: item{":pk": str(auditPrefix + id), ":chained": str(skChained)},
		ScanIndexForward:          aws.Bool(false),
		Limit:                     aws.Int32(1),
		ConsistentRead:            aws.Bool(true),
	}, func(it item) error {
		h = decodeAudit(it).Head()
		return errEnough
	})
	if err != nil {
		return h, fmt.Errorf("read the audit chain's head: %w", err)
	}
	return h, nil
}

// chained is the put of e at the end of id's trail after head, on condition
// that no entry holds that place yet: of two writers that read the same
// head, one lands and the other reads the head again.
func (s *Store) chained(id string, head elicitation.AuditHead, e elicitation.AuditEntry, tok string, ttl types.AttributeValue) types.TransactWriteItem {
	return types.TransactWriteItem{Put: &types.Put{
		TableName: s.table, Item: auditItem(id, elicitation.ChainEntry(id, head, e), tok, ttl),
		ConditionExpression:      aws.String("attribute_not_exists(#pk)"),
		ExpressionAttributeNames: names(attrPK),
	}}
}

// lostPlace reports whether tx was canceled because another writer's
// entry took the place in the chain of its chained entry's put.
func lostPlace(err error, tx []types.TransactWriteItem) bool {
	i := slices.IndexFunc(tx, func(w types.TransactWriteItem) bool {
		return w.Put != nil && strings.HasPrefix(getS(w.Put.Item, attrSK), skChained)
	})
	return i >= 0 && conditionFailed(err, i)
}

// backOff waits before a canceled write starts again (after lostPlace,
// with chainAttempts; otherwise with conflictAttempts).
func (s *Store) backOff(ctx context.Context, attempt int, err error, tx []types.TransactWriteItem) error {
	if lostPlace(err, tx) {
		return s.again(ctx, attempt, chainAttempts, err)
	}
	return s.again(ctx, attempt, conflictAttempts, err)
}

// putEntry appends one audit entry on its own, chained: the put is
// conditioned on its place being free, and a put refused by that condition
// was another writer's, unless the entry there carries this call's token
// (its own earlier attempt, retried by the client after it landed).
func (s *Store) putEntry(ctx context.Context, id string, e elicitation.AuditEntry, ttl types.AttributeValue) error {
	tok := newToken()
	for attempt := 1; ; attempt++ {
		head, err := s.head(ctx, id)
		if err != nil {
			return err
		}
		put := s.chained(id, head, e, tok, ttl).Put
		_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{
			TableName: put.TableName, Item: put.Item,
			ConditionExpression: put.ConditionExpression, ExpressionAttributeNames: put.ExpressionAttributeNames,
		})
		if !condFailed(err) {
			return err
		}
		if mine, err := s.wroteEntry(ctx, put.Item, tok); err != nil || mine {
			return err
		}
		if err := s.again(ctx, attempt, chainAttempts, err); err != nil {
			return err
		}
	}
}

// wroteEntry reports whether the item at it's key (an audit entry, a
// mark) was written by the call whose token is tok.
func (s *Store) wroteEntry(ctx context.Context, it item, tok string) (bool, error) {
	got, err := s.get(ctx, key(getS(it, attrPK), getS(it, attrSK)))
	if err != nil {
		return false, fmt.Errorf("read back %s: %w", getS(it, attrSK), err)
	}
	return got != nil && getS(got, attrWriteToken) == tok, nil
}

// EachRequest implements elicitation.RequestLister: it reads the retention
// index (every state item is in it), shard by shard.
func (s *Store) EachRequest(ctx context.Context, fn func(id string) error) error {
	return s.eachRetained(ctx, nil, fn)
}

// eachRetained calls fn with the id of every request in the retention
// index, shard by shard, or with until of those retained until then at
// most, until fn returns an error.
func (s *Store) eachRetained(ctx context.Context, until *time.Time, fn func(id string) error) error {
	for shard := range retainShards {
		in := &dynamodb.QueryInput{
			IndexName:                 aws.String(retainIndex),
			KeyConditionExpression:    aws.String("#gpk = :gpk"),
			ExpressionAttributeNames:  names(attrRetainShard),
			ExpressionAttributeValues: item{":gpk": str("retain#" + strconv.Itoa(shard))},
		}
		if until != nil {
			in.KeyConditionExpression = aws.String("#gpk = :gpk AND #retainUntil <= :now")
			in.ExpressionAttributeNames["#"+attrRetainUntil] = attrRetainUntil
			in.ExpressionAttributeValues[":now"] = num(until.UnixNano())
		}
		err := s.each(ctx, in, func(it item) error { return fn(getS(it, attrPK)[len(reqPrefix):]) })
		if err != nil {
			return err
		}
	}
	return nil
}
