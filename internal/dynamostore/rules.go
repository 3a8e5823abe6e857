package dynamostore

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// Standing approvals (elicitation.Rules): each rule is one item in the
// partition of the principal and kind it decides for, rule#p#<digest>, so
// that a create reads its candidates with one query, and one pointer item
// in its author's partition, rule#a#<digest>, for the author's listing
// and revocation. The uses, the expiry and the revocation are attributes
// of the rule's item, so that UseRule is one conditional update. IAM
// (template.yaml) lets the MCP function read and use rules (rule#p#*) and
// the review and submit functions make, list and revoke them.
// docs/dynamodb.md lists the attributes.
const (
	ruleForPrefix = "rule#p#"
	ruleByPrefix  = "rule#a#"

	attrRuleUses    = "uses"
	attrRuleMax     = "maxUses"
	attrRuleRevoked = "revoked"
	attrRuleRef     = "ref" // the pointer's: the rule item's pk
)

var _ elicitation.Rules = (*Store)(nil)

func digestKey(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil))
}

func ruleForPK(principal string, kind elicitation.Kind) string {
	return ruleForPrefix + digestKey(principal, string(kind))
}

func ruleByPK(author string) string { return ruleByPrefix + digestKey(author) }

// ruleItem is r's item: its JSON (without the fields kept as attributes)
// and the attributes UseRule and RevokeRule condition on.
func ruleItem(r elicitation.Rule) (item, error) {
	uses, revoked := r.Uses, r.RevokedAt
	r.Uses, r.RevokedAt = 0, time.Time{}
	b, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("encode rule %s: %w", r.ID, err)
	}
	it := key(ruleForPK(r.Principal, r.Kind), r.ID)
	it[attrData] = str(string(b))
	it[attrRuleUses] = num(int64(uses))
	it[attrRuleMax] = num(int64(r.MaxUses))
	putTime(it, attrExpiresAt, r.ExpiresAt)
	putTime(it, attrRuleRevoked, revoked)
	it[attrTTL] = ttlOf(r.RetainUntil)
	return it, nil
}

func decodeRule(it item) (elicitation.Rule, error) {
	var r elicitation.Rule
	if err := json.Unmarshal([]byte(getS(it, attrData)), &r); err != nil {
		return elicitation.Rule{}, fmt.Errorf("decode rule %s: %w", getS(it, attrSK), err)
	}
	uses, _ := getN(it, attrRuleUses)
	r.Uses = int(uses)
	r.RevokedAt = getTime(it, attrRuleRevoked)
	return r, nil
}

// CreateRule implements elicitation.Rules: the rule's item and its
// author's pointer in one transaction, neither over an existing item,
// once the author's rules (RulesBy) leave room (elicitation.RoomForRule),
// ordered by the author's sequence (boundedWrite), so that two made at
// once cannot both pass the count.
func (s *Store) CreateRule(ctx context.Context, r elicitation.Rule) error {
	it, err := ruleItem(r)
	if err != nil {
		return err
	}
	ptr := key(ruleByPK(r.By), r.ID)
	ptr[attrRuleRef] = it[attrPK]
	ptr[attrTTL] = it[attrTTL]
	cond := aws.String("attribute_not_exists(#pk)")
	return s.boundedWrite(ctx, "create rule "+r.ID, key(ruleByPK(r.By), ruleSeqSK), it[attrTTL], func() error {
		rs, err := s.RulesBy(ctx, r.By)
		if err != nil {
			return fmt.Errorf("create rule %s: %w", r.ID, err)
		}
		return elicitation.RoomForRule(rs, r)
	}, []types.TransactWriteItem{
		{Put: &types.Put{TableName: s.table, Item: it, ConditionExpression: cond, ExpressionAttributeNames: names(attrPK)}},
		{Put: &types.Put{TableName: s.table, Item: ptr, ConditionExpression: cond, ExpressionAttributeNames: names(attrPK)}},
	})
}

// ruleSeqSK is the sort key of an author's rule sequence (boundedWrite),
// an item in the author's partition beside the pointers (no rule id
// starts with '#').
const ruleSeqSK = "#seq"

// RulesFor implements elicitation.Rules: one consistent query of the
// principal and kind's partition.
func (s *Store) RulesFor(ctx context.Context, principal string, kind elicitation.Kind, now time.Time) ([]elicitation.Rule, error) {
	var out []elicitation.Rule
	err := s.each(ctx, byPK(ruleForPK(principal, kind)), func(it item) error {
		r, err := decodeRule(it)
		if err != nil {
			return err
		}
		if r.Principal == principal && r.Kind == kind && r.LiveAt(now) {
			out = append(out, r)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("rules for %s: %w", principal, err)
	}
	return out, nil
}

// RulesBy implements elicitation.Rules: the author's pointers (a
// consistent query), then their rules' items in TransactGetItems of up to
// 100 (getAll).
func (s *Store) RulesBy(ctx context.Context, author string) ([]elicitation.Rule, error) {
	var keys []item
	err := s.each(ctx, byPK(ruleByPK(author)), func(ptr item) error {
		if getS(ptr, attrSK) != ruleSeqSK {
			keys = append(keys, key(getS(ptr, attrRuleRef), getS(ptr, attrSK)))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("rules by %s: %w", author, err)
	}
	var out []elicitation.Rule
	for chunk := range slices.Chunk(keys, maxTransactGet) {
		its, err := s.getAll(ctx, chunk)
		if err != nil {
			return nil, fmt.Errorf("rules by %s: %w", author, err)
		}
		for _, it := range its {
			r, err := decodeRule(it)
			if err != nil {
				return nil, fmt.Errorf("rules by %s: %w", author, err)
			}
			if r.By == author {
				out = append(out, r)
			}
		}
	}
	elicitation.SortNewest(out)
	return out, nil
}

// maxTransactGet is the most items one TransactGetItems reads.
const maxTransactGet = 100

// getAll reads the items at keys (at most maxTransactGet) in one
// TransactGetItems: strongly consistent, authorised as each item's
// GetItem, one round trip where GetItem each would be len(keys). Items
// not there are left out. A read canceled by a write in flight on one of
// them starts again (conflictAttempts).
func (s *Store) getAll(ctx context.Context, keys []item) ([]item, error) {
	gets := make([]types.TransactGetItem, len(keys))
	for i, k := range keys {
		gets[i] = types.TransactGetItem{Get: &types.Get{TableName: s.table, Key: k}}
	}
	for attempt := 1; ; attempt++ {
		out, err := s.db.TransactGetItems(ctx, &dynamodb.TransactGetItemsInput{TransactItems: gets})
		if err == nil {
			var its []item
			for _, r := range out.Responses {
				if len(r.Item) > 0 {
					its = append(its, r.Item)
				}
			}
			return its, nil
		}
		if !isCanceled(err) {
			return nil, err
		}
		if aerr := s.again(ctx, attempt, conflictAttempts, err); aerr != nil {
			return nil, aerr
		}
	}
}

// RevokeRule implements elicitation.Rules: the author's pointer names the
// rule's item, whose revocation is one update (the first time kept).
func (s *Store) RevokeRule(ctx context.Context, author, id string, at time.Time) (elicitation.Rule, error) {
	ptr, err := s.get(ctx, key(ruleByPK(author), id))
	if err != nil {
		return elicitation.Rule{}, fmt.Errorf("revoke rule %s: %w", id, err)
	}
	if getS(ptr, attrRuleRef) == "" { // none, or the author's sequence (#seq)
		return elicitation.Rule{}, fmt.Errorf("revoke rule %s: %w", id, elicitation.ErrNotFound)
	}
	out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: s.table, Key: key(getS(ptr, attrRuleRef), id),
		UpdateExpression:          aws.String("SET #revoked = if_not_exists(#revoked, :at)"),
		ConditionExpression:       aws.String("attribute_exists(#pk)"),
		ExpressionAttributeNames:  names(attrPK, attrRuleRevoked),
		ExpressionAttributeValues: item{":at": num(at.UnixNano())},
		ReturnValues:              types.ReturnValueAllNew,
	})
	switch {
	case condFailed(err):
		return elicitation.Rule{}, fmt.Errorf("revoke rule %s: %w", id, elicitation.ErrNotFound)
	case err != nil:
		return elicitation.Rule{}, fmt.Errorf("revoke rule %s: %w", id, err)
	}
	r, err := decodeRule(out.Attributes)
	if err == nil && r.By != author {
		err = elicitation.ErrNotFound // a pointer to another's rule: never written so
	}
	if err != nil {
		return elicitation.Rule{}, fmt.Errorf("revoke rule %s: %w", id, err)
	}
	return r, nil
}

// UseRule implements elicitation.Rules: one update, ADD uses 1,
// conditioned on the rule being there, not revoked, not expired at at and
// below its uses; of concurrent uses of the last one, one lands.
func (s *Store) UseRule(ctx context.Context, r elicitation.Rule, at time.Time) (elicitation.Rule, error) {
	out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: s.table, Key: key(ruleForPK(r.Principal, r.Kind), r.ID),
		UpdateExpression:                    aws.String("ADD #uses :one"),
		ConditionExpression:                 aws.String("attribute_exists(#pk) AND attribute_not_exists(#revoked) AND #expiresAt > :at AND #uses < #maxUses"),
		ExpressionAttributeNames:            names(attrPK, attrRuleRevoked, attrExpiresAt, attrRuleUses, attrRuleMax),
		ExpressionAttributeValues:           item{":one": num(1), ":at": num(at.UnixNano())},
		ReturnValues:                        types.ReturnValueAllNew,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	var ccf *types.ConditionalCheckFailedException
	switch {
	case errors.As(err, &ccf) && ccf.Item == nil:
		return elicitation.Rule{}, fmt.Errorf("use rule %s: %w", r.ID, elicitation.ErrNotFound)
	case errors.As(err, &ccf):
		return elicitation.Rule{}, fmt.Errorf("use rule %s: %w", r.ID, elicitation.ErrRuleSpent)
	case err != nil:
		return elicitation.Rule{}, fmt.Errorf("use rule %s: %w", r.ID, err)
	}
	used, err := decodeRule(out.Attributes)
	if err != nil {
		return elicitation.Rule{}, fmt.Errorf("use rule %s: %w", r.ID, err)
	}
	return used, nil
}
