package dynamostore

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// Delegations (elicitation.Delegations): one item each in the partition
// "dlg", sort key the id: data (the delegation as JSON), frm (its
// delegator), endAt (its end, unix nanoseconds, which the conditions
// compare) and ttl (its end plus DelegationRetention), so DynamoDB's TTL
// removes it some time after. There are few, so a listing is one strongly
// consistent query of the partition.
const (
	delegationPK   = "dlg"
	attrFrom       = "frm"
	attrDelegEnd   = "endAt"
	delegationData = attrData
)

var _ elicitation.Delegations = (*Store)(nil)

func delegationItem(d elicitation.Delegation) (item, error) {
	b, err := json.Marshal(d)
	if err != nil {
		return nil, fmt.Errorf("encode delegation %s: %w", d.ID, err)
	}
	it := key(delegationPK, d.ID)
	it[delegationData] = &types.AttributeValueMemberB{Value: b}
	it[attrFrom] = str(d.From)
	it[attrDelegEnd] = num(d.End.UnixNano())
	it[attrTTL] = ttlOf(d.End.Add(elicitation.DelegationRetention))
	return it, nil
}

// PutDelegation implements elicitation.Delegations: a PutItem conditioned
// on the id being new, once the delegations that have not ended
// (openDelegations) leave room (elicitation.RoomFor), ordered by the
// delegations' sequence (boundedWrite), so that two made at once cannot
// both pass the count.
func (s *Store) PutDelegation(ctx context.Context, d elicitation.Delegation) error {
	if err := elicitation.CheckDelegationKey(d.From, d.ID); err != nil {
		return fmt.Errorf("put delegation: %w", err)
	}
	it, err := delegationItem(d)
	if err != nil {
		return err
	}
	seq := key(delegationPK, delegationSeq)
	return s.boundedWrite(ctx, "delegation "+d.ID, seq, it[attrTTL], func() error {
		open, err := s.openDelegations(ctx, d.CreatedAt)
		if err != nil {
			return fmt.Errorf("put delegation: %w", err)
		}
		return elicitation.RoomFor(open, d)
	}, []types.TransactWriteItem{{Put: &types.Put{
		TableName: s.table, Item: it,
		ConditionExpression:      aws.String("attribute_not_exists(#pk)"),
		ExpressionAttributeNames: names(attrPK),
	}}})
}

// openDelegations is what RoomFor counts: every delegation that ends
// after after, with only its delegator and end read (the items' frm and
// endAt; no delegation decoded), consistently.
func (s *Store) openDelegations(ctx context.Context, after time.Time) ([]elicitation.Delegation, error) {
	var out []elicitation.Delegation
	q := delegationsAfter(after)
	q.ProjectionExpression = aws.String("#frm, #endAt")
	q.ExpressionAttributeNames["#frm"] = attrFrom
	err := s.each(ctx, q, func(it item) error {
		end, _ := getN(it, attrDelegEnd)
		out = append(out, elicitation.Delegation{From: getS(it, attrFrom), End: time.Unix(0, end)})
		return nil
	})
	return out, err
}

// delegationsAfter is the query of the delegations whose end is after
// after (every one kept, with the zero time), consistent: the one
// ListDelegations and openDelegations read.
func delegationsAfter(after time.Time) *dynamodb.QueryInput {
	from := int64(math.MinInt64) // the zero time: every one kept (its UnixNano is not defined)
	if !after.IsZero() {
		from = after.UnixNano()
	}
	return &dynamodb.QueryInput{
		KeyConditionExpression:    aws.String("#pk = :pk"),
		FilterExpression:          aws.String("#endAt > :after"),
		ExpressionAttributeNames:  names(attrPK, attrDelegEnd),
		ExpressionAttributeValues: item{":pk": str(delegationPK), ":after": num(from)},
		ConsistentRead:            aws.Bool(true),
	}
}

// delegationSeq is the sort key of the delegations' one sequence
// (boundedWrite), which orders every delegation's creation, since
// RoomFor counts all reviewers' too: no delegation id has a '#', and
// having no endAt, the sequence is never listed (ListDelegations'
// filter). Delegations are made seldom: one sequence costs no waiting
// worth the name.
const delegationSeq = "#seq#"

// EndDelegation implements elicitation.Delegations: a strongly consistent
// read, then a PutItem conditioned on the delegator and the end read.
func (s *Store) EndDelegation(ctx context.Context, from, id string, at time.Time) (elicitation.Delegation, error) {
	if err := elicitation.CheckDelegationKey(from, id); err != nil {
		return elicitation.Delegation{}, fmt.Errorf("end delegation: %w", err)
	}
	got, err := s.get(ctx, key(delegationPK, id))
	if err != nil {
		return elicitation.Delegation{}, fmt.Errorf("end delegation: %w", err)
	}
	var d elicitation.Delegation
	if got == nil || json.Unmarshal(getB(got, delegationData), &d) != nil {
		return elicitation.Delegation{}, fmt.Errorf("delegation %s: %w", id, elicitation.ErrNotFound)
	}
	read := d.End
	if d, err = d.Ended(from, at); err != nil {
		return elicitation.Delegation{}, err
	}
	it, err := delegationItem(d)
	if err != nil {
		return elicitation.Delegation{}, err
	}
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: s.table, Item: it,
		ConditionExpression:       aws.String("#frm = :from AND #endAt = :read"),
		ExpressionAttributeNames:  names(attrFrom, attrDelegEnd),
		ExpressionAttributeValues: item{":from": str(from), ":read": num(read.UnixNano())},
	})
	if condFailed(err) {
		return elicitation.Delegation{}, fmt.Errorf("delegation %s changed meanwhile: %w", id, elicitation.ErrConflict)
	}
	if err != nil {
		return elicitation.Delegation{}, fmt.Errorf("end delegation: %w", err)
	}
	return d, nil
}

// ListDelegations implements elicitation.Delegations.
func (s *Store) ListDelegations(ctx context.Context, after time.Time) ([]elicitation.Delegation, error) {
	var out []elicitation.Delegation
	err := s.each(ctx, delegationsAfter(after), func(it item) error {
		var d elicitation.Delegation
		if err := json.Unmarshal(getB(it, delegationData), &d); err != nil {
			return fmt.Errorf("decode delegation %s: %w", getS(it, attrSK), err)
		}
		out = append(out, d)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list delegations: %w", err)
	}
	return elicitation.Listed(out, after), nil
}
