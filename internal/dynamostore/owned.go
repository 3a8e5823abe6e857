package dynamostore

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// The owners' index: a global secondary index of the state items,
// partitioned by their owner and sorted by createdAt, projecting the whole
// item, so that one principal's listing is one query of its own partition.
// The partition attribute is a digest of the owner (an owner of any length
// or bytes fits a key, and no owner is a prefix of another's); Create puts
// it and nothing changes it, and the request leaves the index when Cleanup
// (or TTL) deletes its state item. Like every global secondary index it is
// eventually consistent.
const (
	ownedIndex  = "owned"
	attrOwnedPK = "opk"
)

func ownedPK(owner string) types.AttributeValue {
	sum := sha256.Sum256([]byte(owner))
	return str("owner#" + base64.RawURLEncoding.EncodeToString(sum[:]))
}

// addOwned puts on a new request's state item its owner's index key.
func addOwned(it item, st elicitation.State) { it[attrOwnedPK] = ownedPK(st.Owner) }

// OwnedRequests implements elicitation.Store: one query of the owner's
// partition of the index, newest first, from the position on (the
// position's index key and table key are its ExclusiveStartKey, which
// needs no item there: a request cleaned up meanwhile is passed as if it
// were still there).
func (s *Store) OwnedRequests(ctx context.Context, owner string, after elicitation.OwnedPosition, limit int) ([]elicitation.State, bool, error) {
	in := &dynamodb.QueryInput{
		IndexName:                 aws.String(ownedIndex),
		KeyConditionExpression:    aws.String("#opk = :opk"),
		ExpressionAttributeNames:  names(attrOwnedPK),
		ExpressionAttributeValues: item{":opk": ownedPK(owner)},
		ScanIndexForward:          aws.Bool(false),
		Limit:                     aws.Int32(int32(min(limit+1, 1000))),
	}
	if !after.IsZero() {
		if len(reqPrefix+after.ID) > maxKeyBytes {
			return nil, false, nil // no request has that id
		}
		start := stateKey(after.ID)
		start[attrOwnedPK] = ownedPK(owner)
		start[attrCreatedAt] = num(after.CreatedAt.UnixNano())
		in.ExclusiveStartKey = start
	}
	var out []elicitation.State
	err := s.each(ctx, in, func(it item) error {
		if len(out) > limit {
			return errEnough
		}
		if st := decodeState(it).State; st.Owner == owner {
			out = append(out, st)
		}
		return nil
	})
	if err != nil {
		return nil, false, fmt.Errorf("owned requests: query the owned index: %w", err)
	}
	if len(out) > limit {
		return out[:limit], true, nil
	}
	return out, false, nil
}
