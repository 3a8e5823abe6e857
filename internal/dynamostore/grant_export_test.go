package dynamostore

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// GrantItem returns the attributes of a grant's item as stored (tombstone
// or not): its ttl, whether it holds data, whether it is deleted; ok is
// false when there is no item.
func (g *Grants) GrantItem(ctx context.Context, kind, id string) (ttl int64, hasData, deleted, ok bool, err error) {
	out, err := g.s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: g.s.table, Key: grantItemKey(kind, id), ConsistentRead: aws.Bool(true),
	})
	if err != nil || out.Item == nil {
		return 0, false, false, false, err
	}
	ttl, _ = getN(out.Item, attrTTL)
	return ttl, out.Item[attrData] != nil, out.Item[attrDeleted] != nil, true, nil
}
