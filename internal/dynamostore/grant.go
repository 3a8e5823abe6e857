package dynamostore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/mcp-elicitation/elicitation/internal/grant"
)

// The authorization server's records (grant.Store): one item each, alone
// in its partition grant#<kind>#<id> (a kind holds no #, so the key names
// one kind and id; IAM can grant a function one kind by LeadingKeys
// "grant#<kind>#*"). docs/dynamodb.md lists the attributes.
const (
	grantPrefix = "grant#"
	skGrant     = "grant"

	attrGrantExpires = "expires" // unix nanoseconds; ttl is the same time in seconds, rounded up
	// attrDeleted marks a deleted record, kept until its ttl so that a
	// Delete whose response was lost recognises, on its retry, that it
	// deleted it (the tombstone's version is the deleting call's).
	attrDeleted = "deleted"
)

// Grants is the DynamoDB grant.Store, on the Store's table. Any number of
// them, in any number of processes, may share the table.
type Grants struct {
	s   *Store
	now func() time.Time
}

var _ grant.Store = (*Grants)(nil)

// Grants returns the grant.Store on s's table, which judges expiry by now
// (nil: time.Now). Each record carries ttl, its expiry, so DynamoDB's TTL
// removes it some time after; no read returns it from its expiry on.
func (s *Store) Grants(now func() time.Time) *Grants {
	if now == nil {
		now = time.Now
	}
	return &Grants{s: s, now: now}
}

func grantItemKey(kind, id string) item { return key(grantPrefix+kind+"#"+id, skGrant) }

// Get implements grant.Store with a strongly consistent read.
func (g *Grants) Get(ctx context.Context, kind, id string) (grant.Record, error) {
	if err := grant.CheckKey(kind, id); err != nil {
		return grant.Record{}, err
	}
	it, err := g.s.get(ctx, grantItemKey(kind, id))
	if err != nil {
		return grant.Record{}, fmt.Errorf("get grant %s: %w", kind, err)
	}
	if !liveGrant(it, g.now()) {
		return grant.Record{}, fmt.Errorf("get grant %s: %w", kind, grant.ErrNotFound)
	}
	v, _ := getN(it, attrVersion)
	return grant.Record{Kind: kind, ID: id, Data: getB(it, attrData), Expires: getTime(it, attrGrantExpires), Version: v}, nil
}

// liveGrant reports whether it is a record that is neither deleted nor
// expired at now.
func liveGrant(it item, now time.Time) bool {
	exp, ok := getN(it, attrGrantExpires)
	return it != nil && ok && it[attrDeleted] == nil && now.UnixNano() < exp
}

// Put implements grant.Store with one conditional PutItem: over no live
// record (none, deleted or expired) for version 0, else over the version
// read while it lives.
func (g *Grants) Put(ctx context.Context, r grant.Record) (grant.Record, error) {
	if err := grant.Check(r); err != nil {
		return grant.Record{}, err
	}
	now, next := g.now(), grant.NewVersion()
	it := grantItemKey(r.Kind, r.ID)
	it[attrVersion] = num(next)
	putTime(it, attrGrantExpires, r.Expires)
	it[attrTTL] = ttlOf(r.Expires)
	if len(r.Data) > 0 {
		it[attrData] = &types.AttributeValueMemberB{Value: r.Data}
	}
	in := &dynamodb.PutItemInput{
		TableName: g.s.table, Item: it,
		ExpressionAttributeNames:            names(attrGrantExpires, attrDeleted),
		ExpressionAttributeValues:           item{":now": num(now.UnixNano())},
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}
	if r.Version == 0 {
		in.ConditionExpression = aws.String("attribute_not_exists(#pk) OR #expires <= :now OR attribute_exists(#deleted)")
		in.ExpressionAttributeNames["#pk"] = attrPK
	} else {
		in.ConditionExpression = aws.String("#version = :read AND #expires > :now AND attribute_not_exists(#deleted)")
		in.ExpressionAttributeNames["#version"] = attrVersion
		in.ExpressionAttributeValues[":read"] = num(r.Version)
	}
	_, err := g.s.db.PutItem(ctx, in)
	if err = refused(err, now, next, grant.ErrConflict); err != nil {
		return grant.Record{}, fmt.Errorf("put grant %s: %w", r.Kind, err)
	}
	r.Version = next
	return r, nil
}

// Delete implements grant.Store: the record becomes a tombstone (its data
// removed) until its ttl, conditioned on the version read while it lives.
func (g *Grants) Delete(ctx context.Context, kind, id string, version int64) error {
	if err := grant.CheckKey(kind, id); err != nil {
		return err
	}
	now, next := g.now(), grant.NewVersion()
	_, err := g.s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: g.s.table, Key: grantItemKey(kind, id),
		UpdateExpression:                    aws.String("SET #version = :next, #deleted = :true REMOVE #data"),
		ConditionExpression:                 aws.String("#version = :read AND #expires > :now AND attribute_not_exists(#deleted)"),
		ExpressionAttributeNames:            names(attrVersion, attrDeleted, attrData, attrGrantExpires),
		ExpressionAttributeValues:           item{":next": num(next), ":true": &types.AttributeValueMemberBOOL{Value: true}, ":read": num(version), ":now": num(now.UnixNano())},
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	if err = refused(err, now, next, grant.ErrNotFound); err != nil {
		return fmt.Errorf("delete grant %s: %w", kind, err)
	}
	return nil
}

// refused reads the error of a conditional write at now. The item as the
// condition found it tells why it failed: it already holds next, the version this
// call writes (an earlier attempt of it landed, its response lost: no
// error); it is a live record (ErrConflict: another version); there is no
// live record (none: ErrConflict for a Put, ErrNotFound for a Delete).
func refused(err error, now time.Time, next int64, none error) error {
	var ccf *types.ConditionalCheckFailedException
	if !errors.As(err, &ccf) {
		return err
	}
	if v, _ := getN(ccf.Item, attrVersion); v == next {
		return nil
	}
	if liveGrant(ccf.Item, now) {
		return grant.ErrConflict
	}
	return none
}
