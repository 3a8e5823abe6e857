package dynamostore

import (
	"context"
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// A sequence orders the writes that a bound counted for: an item whose
// number each such write moves on in its own transaction, conditioned on
// the number read before the count. Two writes that counted the same
// items cannot both land: the second's condition fails, and it reads and
// counts again. One per author guards the live-rule bound (CreateRule),
// one for all delegations MaxDelegationsFrom and MaxDelegations
// (PutDelegation). Its number is
// attrSeq, as an audit entry's place is.

// boundedWrite writes tx once check, run after the sequence at seq is
// read, passes; the sequence's put, kept until ttl, goes in tx last. A
// failed condition of tx's own items is ErrConflict; check's error comes
// back as it is; other errors are wrapped with op. A sequence moved by
// another write, or a transaction conflict, counts again
// (conflictAttempts).
func (s *Store) boundedWrite(ctx context.Context, op string, seq item, ttl types.AttributeValue, check func() error, tx []types.TransactWriteItem) error {
	for attempt := 1; ; attempt++ {
		next, err := s.seqPut(ctx, seq, ttl)
		if err != nil {
			return fmt.Errorf("%s: %w", op, err)
		}
		if err := check(); err != nil {
			return err
		}
		err = s.transact(ctx, append(slices.Clip(tx), types.TransactWriteItem{Put: next}))
		switch {
		case err == nil:
			return nil
		case ownConditionFailed(err, len(tx)):
			return fmt.Errorf("%s: %w", op, elicitation.ErrConflict)
		case !isCanceled(err):
			return fmt.Errorf("%s: %w", op, err)
		}
		if aerr := s.again(ctx, attempt, conflictAttempts, err); aerr != nil {
			return fmt.Errorf("%s: %w", op, aerr)
		}
	}
}

// ownConditionFailed reports whether err is a transaction canceled by the
// condition of one of its first n items.
func ownConditionFailed(err error, n int) bool {
	for i := range n {
		if conditionFailed(err, i) {
			return true
		}
	}
	return false
}

// seqPut reads the sequence at k (consistent) and returns the put that
// moves it on, conditioned on the number read (none: that there is none).
func (s *Store) seqPut(ctx context.Context, k item, ttl types.AttributeValue) (*types.Put, error) {
	got, err := s.get(ctx, k)
	if err != nil {
		return nil, err
	}
	it := key(getS(k, attrPK), getS(k, attrSK))
	it[attrSeq], it[attrTTL] = num(1), ttl
	p := &types.Put{TableName: s.table, Item: it,
		ConditionExpression:      aws.String("attribute_not_exists(#pk)"),
		ExpressionAttributeNames: names(attrPK),
	}
	if got != nil {
		v, _ := getN(got, attrSeq)
		it[attrSeq] = num(v + 1)
		p.ConditionExpression = aws.String("#seq = :seq")
		p.ExpressionAttributeNames = names(attrSeq)
		p.ExpressionAttributeValues = item{":seq": num(v)}
	}
	return p, nil
}
