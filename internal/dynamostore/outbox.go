package dynamostore

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// The outbox: one item per delivery under pk "outbox#<shard>" (so that IAM
// can grant a deliverer the outbox and audit entries without decision
// writes), sk "<dueAt>#<delivery id>", so that the due deliveries of a shard
// are one key-range query. A stream on the table (KEYS_ONLY) hands every new
// delivery to the notify function; the item itself is read back
// consistently, so the review link never travels in a stream record.
const (
	outboxPrefix = "outbox#"
	outboxShards = 8

	attrRequestID = "requestId"
	attrEvent     = "event"
	attrTarget    = "target"
	attrDueAt     = "dueAt"
	attrLink      = "link"
	attrAttempts  = "attempts"
	attrNotBefore = "notBefore"
	attrLease     = "lease"
	attrStep      = "step"
)

func outboxKey(d elicitation.Delivery) item {
	return key(shard(outboxPrefix, d.ID, outboxShards), sortable(d.DueAt.UnixNano())+"#"+d.ID)
}

// IsOutboxKey reports whether a table key (as a stream record carries it)
// names an outbox item.
func IsOutboxKey(pk string) bool { return strings.HasPrefix(pk, outboxPrefix) }

// DeliveryAt names the delivery an outbox item's sort key holds (its ID and
// DueAt, which is all ClaimDelivery needs), for a stream record's keys.
func DeliveryAt(sk string) (elicitation.Delivery, error) {
	due, id, ok := strings.Cut(sk, "#")
	if !ok || len(due) != 20 || id == "" {
		return elicitation.Delivery{}, fmt.Errorf("not an outbox sort key: %q", sk)
	}
	u, err := strconv.ParseUint(due, 10, 64)
	if err != nil {
		return elicitation.Delivery{}, fmt.Errorf("not an outbox sort key: %q", sk)
	}
	return elicitation.Delivery{ID: id, DueAt: time.Unix(0, int64(u^(1<<63))).UTC()}, nil
}

func deliveryItem(d elicitation.Delivery) item {
	it := outboxKey(d)
	it[attrID] = str(d.ID)
	it[attrRequestID] = str(d.RequestID)
	it[attrEvent] = str(string(d.Event))
	it[attrTarget] = str(d.Target)
	putTime(it, attrAt, d.At)
	putTime(it, attrDueAt, d.DueAt)
	putTime(it, attrRetainUntil, d.RetainUntil)
	putStr(it, attrLink, d.Link)
	it[attrAttempts] = num(int64(d.Attempts))
	putTime(it, attrNotBefore, d.NotBefore)
	putStr(it, attrLease, d.Lease)
	if d.Step != 0 {
		it[attrStep] = num(int64(d.Step))
	}
	it[attrTTL] = ttlOf(d.RetainUntil)
	return it
}

func decodeDelivery(it item) elicitation.Delivery {
	n, _ := getN(it, attrAttempts)
	step, _ := getN(it, attrStep)
	return elicitation.Delivery{
		Step: int(step),
		ID:   getS(it, attrID), RequestID: getS(it, attrRequestID),
		Event: elicitation.Event(getS(it, attrEvent)), Target: getS(it, attrTarget),
		At: getTime(it, attrAt), DueAt: getTime(it, attrDueAt), RetainUntil: getTime(it, attrRetainUntil),
		Link: getS(it, attrLink), Attempts: int(n), NotBefore: getTime(it, attrNotBefore), Lease: getS(it, attrLease),
	}
}

func putDeliveries(table *string, ds []elicitation.Delivery) []types.TransactWriteItem {
	var tx []types.TransactWriteItem
	for _, d := range ds {
		tx = append(tx, types.TransactWriteItem{Put: &types.Put{TableName: table, Item: deliveryItem(d)}})
	}
	return tx
}

func withdrawDeliveries(table *string, ds []elicitation.Delivery) []types.TransactWriteItem {
	var tx []types.TransactWriteItem
	for _, d := range ds {
		tx = append(tx, types.TransactWriteItem{Delete: &types.Delete{TableName: table, Key: outboxKey(d)}})
	}
	return tx
}

// DueDeliveries implements elicitation.Store: one key-range query per
// outbox shard, filtered on NotBefore, shared among targets by
// elicitation.FairDue. It reads every due delivery (those backing off
// included, which the filter drops after the read): the sweep's cost grows
// with the outbox, not with limit.
func (s *Store) DueDeliveries(ctx context.Context, now time.Time, limit int) ([]elicitation.Delivery, error) {
	var out []elicitation.Delivery
	upper := sortable(now.UnixNano() + 1)
	for shard := range outboxShards {
		err := s.each(ctx, &dynamodb.QueryInput{
			KeyConditionExpression:    aws.String("#pk = :pk AND #sk < :upper"),
			FilterExpression:          aws.String("attribute_not_exists(#notBefore) OR #notBefore <= :now"),
			ExpressionAttributeNames:  names(attrPK, attrSK, attrNotBefore),
			ExpressionAttributeValues: item{":pk": str(outboxPrefix + strconv.Itoa(shard)), ":upper": str(upper), ":now": num(now.UnixNano())},
			ConsistentRead:            aws.Bool(true),
		}, func(it item) error { out = append(out, decodeDelivery(it)); return nil })
		if err != nil {
			return nil, fmt.Errorf("due deliveries: %w", err)
		}
	}
	return elicitation.FairDue(out, limit), nil
}

// ClaimDelivery implements elicitation.Store with one conditional update.
func (s *Store) ClaimDelivery(ctx context.Context, d elicitation.Delivery, now, until time.Time) (elicitation.Delivery, bool, error) {
	out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: s.table, Key: outboxKey(d),
		UpdateExpression:          aws.String("SET #lease = :lease, #notBefore = :until ADD #attempts :one"),
		ConditionExpression:       aws.String("attribute_exists(#pk) AND #dueAt <= :now AND (attribute_not_exists(#notBefore) OR #notBefore <= :now)"),
		ExpressionAttributeNames:  names(attrPK, attrLease, attrNotBefore, attrAttempts, attrDueAt),
		ExpressionAttributeValues: item{":lease": str(elicitation.NewLease()), ":until": num(until.UnixNano()), ":one": num(1), ":now": num(now.UnixNano())},
		ReturnValues:              types.ReturnValueAllNew,
	})
	if condFailed(err) {
		return elicitation.Delivery{}, false, nil
	}
	if err != nil {
		return elicitation.Delivery{}, false, fmt.Errorf("claim delivery %s: %w", d.ID, err)
	}
	return decodeDelivery(out.Attributes), true, nil
}

// SettleDelivery implements elicitation.Store: the outbox item's removal
// (or its reschedule) and the audit entry in one transaction, on condition
// that the lease is still the one held and the request still exists.
func (s *Store) SettleDelivery(ctx context.Context, d elicitation.Delivery, retryAt time.Time, entry elicitation.AuditEntry) error {
	if d.Lease == "" {
		return fmt.Errorf("settle delivery %s: not claimed: %w", d.ID, elicitation.ErrConflict)
	}
	held := "#lease = :lease"
	vals := item{":lease": str(d.Lease)}
	var op types.TransactWriteItem
	if retryAt.IsZero() {
		op.Delete = &types.Delete{
			TableName: s.table, Key: outboxKey(d),
			ConditionExpression: aws.String(held), ExpressionAttributeNames: names(attrLease), ExpressionAttributeValues: vals,
		}
	} else {
		vals[":retry"] = num(retryAt.UnixNano())
		op.Update = &types.Update{
			TableName: s.table, Key: outboxKey(d),
			UpdateExpression:    aws.String("SET #notBefore = :retry REMOVE #lease"),
			ConditionExpression: aws.String(held), ExpressionAttributeNames: names(attrLease, attrNotBefore), ExpressionAttributeValues: vals,
		}
	}
	if unkeyable(d.RequestID) {
		return fmt.Errorf("settle delivery %s: %w", d.ID, elicitation.ErrNotFound)
	}
	tok := newToken()
	for attempt := 1; ; attempt++ {
		head, err := s.head(ctx, d.RequestID)
		if err != nil {
			return fmt.Errorf("settle delivery %s: %w", d.ID, err)
		}
		tx := []types.TransactWriteItem{
			op,
			{ConditionCheck: &types.ConditionCheck{
				TableName: s.table, Key: stateKey(d.RequestID),
				ConditionExpression: aws.String("attribute_exists(#pk)"), ExpressionAttributeNames: names(attrPK),
			}},
			s.chained(d.RequestID, head, entry, tok, ttlOf(d.RetainUntil)),
		}
		err = s.transact(ctx, tx)
		if err == nil || !lostPlace(err, tx) || conditionFailed(err, 0) || conditionFailed(err, 1) {
			return s.settled(ctx, d, op, err)
		}
		if aerr := s.backOff(ctx, attempt, err, tx); aerr != nil {
			return fmt.Errorf("settle delivery %s: %w", d.ID, aerr)
		}
	}
}

// settled is SettleDelivery's answer to its transaction's outcome, err.
func (s *Store) settled(ctx context.Context, d elicitation.Delivery, op types.TransactWriteItem, err error) error {
	switch {
	case err == nil:
		return nil
	case !isCanceled(err):
		return fmt.Errorf("settle delivery %s: %w", d.ID, err)
	case conditionFailed(err, 0):
		return fmt.Errorf("settle delivery %s: the claim is no longer held: %w", d.ID, elicitation.ErrConflict)
	case conditionFailed(err, 1):
		// The request was cleaned up: settle the delivery, audit nothing.
		if err := s.transact(ctx, []types.TransactWriteItem{op}); err != nil {
			if isCanceled(err) {
				return fmt.Errorf("settle delivery %s: the claim is no longer held: %w", d.ID, elicitation.ErrConflict)
			}
			return fmt.Errorf("settle delivery %s: %w", d.ID, err)
		}
		return nil
	}
	return fmt.Errorf("settle delivery %s: %w", d.ID, err)
}

// cleanupOutbox removes the deliveries whose request's retention ended (on
// AWS the TTL sweeper removes them too, eventually).
func (s *Store) cleanupOutbox(ctx context.Context, now time.Time) error {
	var keys []item
	for shard := range outboxShards {
		err := s.each(ctx, &dynamodb.QueryInput{
			KeyConditionExpression:    aws.String("#pk = :pk"),
			FilterExpression:          aws.String("#retainUntil <= :now"),
			ProjectionExpression:      aws.String("#pk, #sk"),
			ExpressionAttributeNames:  names(attrPK, attrSK, attrRetainUntil),
			ExpressionAttributeValues: item{":pk": str(outboxPrefix + strconv.Itoa(shard)), ":now": num(now.UnixNano())},
		}, func(it item) error { keys = append(keys, key(getS(it, attrPK), getS(it, attrSK))); return nil })
		if err != nil {
			return fmt.Errorf("cleanup outbox: %w", err)
		}
	}
	if err := s.deleteAll(ctx, keys); err != nil {
		return fmt.Errorf("cleanup outbox: %w", err)
	}
	return nil
}

// DeliveryTargets fills in the Target of each of ds, named by ID and DueAt
// as a stream record's keys name them, from the outbox (read
// consistently), so that the notify function can put each in its target's
// lane before claiming it. A delivery no longer in the outbox keeps an
// empty Target (its claim will find nothing).
func (s *Store) DeliveryTargets(ctx context.Context, ds []elicitation.Delivery) error {
	for i := range ds {
		k := outboxKey(ds[i])
		out, err := s.db.Query(ctx, &dynamodb.QueryInput{
			TableName:                 s.table,
			KeyConditionExpression:    aws.String("#pk = :pk AND #sk = :sk"),
			ProjectionExpression:      aws.String("#target"),
			ExpressionAttributeNames:  names(attrPK, attrSK, attrTarget),
			ExpressionAttributeValues: item{":pk": k[attrPK], ":sk": k[attrSK]},
			ConsistentRead:            aws.Bool(true),
		})
		if err != nil {
			return fmt.Errorf("read delivery %s: %w", ds[i].ID, err)
		}
		if len(out.Items) == 1 {
			ds[i].Target = getS(out.Items[0], attrTarget)
		}
	}
	return nil
}
