package dynamostore

import (
	"context"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
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

// ItemSizes returns the DynamoDB item sizes (attribute names plus values,
// as DynamoDB counts them) of a request's state item, payload chunks and
// the encoded payload's size before chunking, plus its encoding.
func ItemSizes(r elicitation.Request) (state int, chunks []int, encoded int, enc string, err error) {
	state = itemSize(stateItem(r.State, newToken()))
	its, err := payloadItems(r.State.ID, r.Payload, ttlOf(r.State.RetainUntil))
	if err != nil {
		return 0, nil, 0, "", err
	}
	for _, it := range its {
		chunks = append(chunks, itemSize(it))
		encoded += len(getB(it, attrData))
	}
	return state, chunks, encoded, getS(its[0], attrEnc), nil
}

// AuditItemSize is the size of one audit entry item.
func AuditItemSize(id string, e elicitation.AuditEntry) int {
	return itemSize(auditItem(id, elicitation.ChainEntry(id, elicitation.AuditHead{Seq: 1e6, Hash: strings.Repeat("0", 64)}, e), newToken(), num(1e9)))
}

func itemSize(it item) int {
	n := 0
	for name, v := range it {
		n += len(name)
		switch v := v.(type) {
		case *types.AttributeValueMemberS:
			n += len(v.Value)
		case *types.AttributeValueMemberB:
			n += len(v.Value)
		case *types.AttributeValueMemberN:
			n += (len(strings.TrimLeft(v.Value, "-0"))+1)/2 + 1
		}
	}
	return n
}

// TTLs returns the ttl attribute of every item of a request, by
// partition and sort key.
func (s *Store) TTLs(ctx context.Context, id string) (map[string]int64, error) {
	ttls := map[string]int64{}
	for _, pk := range []string{reqPrefix + id, auditPrefix + id} {
		err := s.query(ctx, pk, false, func(it item) {
			n, _ := getN(it, attrTTL)
			ttls[pk+" "+getS(it, attrSK)] = n
		})
		if err != nil {
			return nil, err
		}
	}
	return ttls, nil
}
