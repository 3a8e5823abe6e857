package dynamostore_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/mcp-elicitation/elicitation/internal/dynamostore"
	"github.com/mcp-elicitation/elicitation/internal/dynamostore/dynamotest"
	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// A trail written before the chain (e# items, keyed by time, without a
// hash) reads first, by time, and entries appended after it chain from
// seq 1: the trail verifies with the old entries as its unchained prefix.
func TestChainAfterUnchainedEntries(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, db, table := dynamotest.Store(t, dynamostore.Options{})
	r := approval()
	mustCreate(t, s, r)
	id := r.State.ID
	for _, at := range []time.Time{t0.Add(-2 * time.Second), t0.Add(-time.Second)} {
		n := at.UnixNano()
		_, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: map[string]types.AttributeValue{
			"pk":     &types.AttributeValueMemberS{Value: "audit#" + id},
			"sk":     &types.AttributeValueMemberS{Value: fmt.Sprintf("e#%020d#%020d#00000000", uint64(n)^(1<<63), uint64(n)^(1<<63))},
			"at":     &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)},
			"action": &types.AttributeValueMemberS{Value: string(elicitation.ActionRendered)},
		}})
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Append(ctx, id, elicitation.AuditEntry{At: t0, Action: elicitation.ActionPushed, Principal: "alice"}); err != nil {
		t.Fatal(err)
	}
	tr, err := s.Audit(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	check, err := elicitation.VerifyAudit(id, tr.Entries)
	if err != nil || check.Unchained != 2 || check.Chained != 2 || check.Head.Seq != 2 {
		t.Fatalf("VerifyAudit = %+v, %v", check, err)
	}
	if e := tr.Entries; !e[0].At.Before(e[1].At) || e[2].Action != elicitation.ActionCreated || e[3].Action != elicitation.ActionPushed {
		t.Errorf("trail %+v", e)
	}
}
