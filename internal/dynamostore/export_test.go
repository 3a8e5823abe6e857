package dynamostore

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// CountItems counts the items of a request, in both its partitions.
func (s *Store) CountItems(ctx context.Context, id string) (int, error) {
	n := 0
	for _, pk := range []string{reqPrefix + id, auditPrefix + id} {
		out, err := s.db.Query(ctx, &dynamodb.QueryInput{
			TableName: s.table, KeyConditionExpression: aws.String("#pk = :pk"),
			ExpressionAttributeNames: names(attrPK), ExpressionAttributeValues: item{":pk": str(pk)},
			ConsistentRead: aws.Bool(true), Select: "COUNT",
		})
		if err != nil {
			return 0, err
		}
		n += int(out.Count)
	}
	return n, nil
}
