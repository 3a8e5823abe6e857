package dynamostore

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// The pending count (elicitation.Request.MaxPending): one item per owner,
// in the owner's own partition (the owners' index key, "owner#" and the
// digest of the owner), holding how many of its requests were created
// under a bound and not resolved since. Create adds one in its transaction,
// conditioned on the count being below the bound; the Resolve that ends a
// counted request's pending state subtracts one in its own. A request that
// expires is not written, so it still counts: when the count is full,
// Create recounts the owner's requests pending at its time from the
// owners' index (at most once per PendingRecount), and tries again if the
// recount made room.
const (
	skPendingCount = "pending"
	attrCount      = "n"
	attrCountedAt  = "countedAt" // the time of the last recount
	attrCounted    = "counted"   // on a state item: its create added to the count
)

// PendingRecount is how often, at most, a full pending count is recounted
// from the owners' index (in the time of the creates that find it full):
// an owner at its bound costs one index query per PendingRecount, not one
// per refused create, and an expired request stops counting within it.
const PendingRecount = 30 * time.Second

func pendingCountKey(owner string) item {
	return item{attrPK: ownedPK(owner), attrSK: str(skPendingCount)}
}

// countPending is the transaction item of a create under r.MaxPending: one
// more in its owner's count, if the count is below the bound. The item
// lives until every request it counts has expired.
func (s *Store) countPending(r elicitation.Request) types.TransactWriteItem {
	return types.TransactWriteItem{Update: &types.Update{
		TableName: s.table, Key: pendingCountKey(r.State.Owner),
		UpdateExpression:         aws.String("ADD #n :one, #version :one SET #ttl = :ttl"),
		ConditionExpression:      aws.String("attribute_not_exists(#n) OR #n < :max"),
		ExpressionAttributeNames: names(attrCount, attrVersion, attrTTL),
		ExpressionAttributeValues: item{
			":one": num(1), ":max": num(int64(r.MaxPending)),
			":ttl": ttlOf(r.State.CreatedAt.Add(elicitation.MaxTimeout + time.Hour)),
		},
	}}
}

// uncountPending is the transaction item of the resolution that ends a
// counted request's pending state: one less in its owner's count.
func (s *Store) uncountPending(owner string) types.TransactWriteItem {
	return types.TransactWriteItem{Update: &types.Update{
		TableName: s.table, Key: pendingCountKey(owner),
		UpdateExpression:          aws.String("ADD #n :less, #version :one"),
		ExpressionAttributeNames:  names(attrCount, attrVersion),
		ExpressionAttributeValues: item{":less": num(-1), ":one": num(1)},
	}}
}

// recount sets r's owner's pending count to the number of its counted
// requests pending at r's creation, read from the owners' index, unless
// the count was recounted less than PendingRecount before, and reports
// whether the count is now below the bound. The write is conditioned on
// the count's version: a create or resolve meanwhile makes it report
// false (the create is refused; the next one recounts again). The owners'
// index is eventually consistent: a request created a moment before the
// recount may be missed, so the bound may be passed by the few created in
// that moment.
func (s *Store) recount(ctx context.Context, r elicitation.Request) (bool, error) {
	now := r.State.CreatedAt
	count, err := s.get(ctx, pendingCountKey(r.State.Owner))
	if err != nil {
		return false, fmt.Errorf("read the pending count: %w", err)
	}
	version, _ := getN(count, attrVersion)
	if at := getTime(count, attrCountedAt); !at.IsZero() && now.Sub(at) < PendingRecount {
		return false, nil
	}
	n, err := s.countOwnedPending(ctx, r.State.Owner, now)
	if err != nil {
		return false, err
	}
	cond := "attribute_not_exists(#version)"
	vals := item{":n": num(n), ":at": num(now.UnixNano()), ":one": num(1)}
	if count != nil {
		cond = "#version = :version"
		vals[":version"] = num(version)
	}
	_, err = s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: s.table, Key: pendingCountKey(r.State.Owner),
		UpdateExpression:          aws.String("SET #n = :n, #countedAt = :at ADD #version :one"),
		ConditionExpression:       aws.String(cond),
		ExpressionAttributeNames:  names(attrCount, attrCountedAt, attrVersion),
		ExpressionAttributeValues: vals,
	})
	switch {
	case condFailed(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("write the pending count: %w", err)
	}
	return n < int64(r.MaxPending), nil
}

// countOwnedPending counts owner's counted requests pending at now: one
// query of its partition of the owners' index, over the requests created
// within MaxTimeout before now (no earlier one can still be pending).
func (s *Store) countOwnedPending(ctx context.Context, owner string, now time.Time) (int64, error) {
	p := dynamodb.NewQueryPaginator(s.db, &dynamodb.QueryInput{
		TableName:                s.table,
		IndexName:                aws.String(ownedIndex),
		KeyConditionExpression:   aws.String("#opk = :opk AND #createdAt > :since"),
		FilterExpression:         aws.String("#status = :pending AND #expiresAt > :now AND attribute_exists(#counted)"),
		ExpressionAttributeNames: names(attrOwnedPK, attrCreatedAt, attrStatus, attrExpiresAt, attrCounted),
		ExpressionAttributeValues: item{
			":opk": ownedPK(owner), ":since": num(now.Add(-elicitation.MaxTimeout).UnixNano()),
			":pending": str(string(elicitation.StatusPending)), ":now": num(now.UnixNano()),
		},
		Select: types.SelectCount,
	})
	var n int64
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return 0, fmt.Errorf("count pending requests: query the owned index: %w", err)
		}
		n += int64(page.Count)
	}
	return n, nil
}
