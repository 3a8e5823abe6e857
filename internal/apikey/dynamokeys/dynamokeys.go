// Package dynamokeys is the DynamoDB implementation of apikey.Store, in the
// elicitation table beside the requests (whose items start "req#" and
// "audit#"):
//
//	pk "apikey#<hash>"  sk "apikey"   the key, read on every authenticated call
//	pk "apikeys"        sk "<id>"     the listing entry, read by "keys list"
//
// Both are written together. The MCP function needs only GetItem on
// "apikey#*"; key administration is an operator's job, with the operator's
// credentials.
package dynamokeys

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/mcp-elicitation/elicitation/internal/apikey"
)

// The key layout; template.yaml's IAM conditions name KeyPrefix.
const (
	KeyPrefix  = "apikey#"
	keySK      = "apikey"
	ListPK     = "apikeys"
	attrPK     = "pk"
	attrSK     = "sk"
	attrHash   = "hash"
	attrID     = "id"
	attrPrin   = "principal"
	attrName   = "name"
	attrCreate = "createdAt" // unix milliseconds, as are the other times
	attrExpire = "expiresAt"
	attrRevoke = "revokedAt"
)

// Store is an apikey.Store on one DynamoDB table.
type Store struct {
	db    *dynamodb.Client
	table *string
}

var _ apikey.Store = (*Store)(nil)

// New returns a Store on table through client. The table is the
// elicitation table (string pk and sk).
func New(client *dynamodb.Client, table string) *Store {
	return &Store{db: client, table: aws.String(table)}
}

type item = map[string]types.AttributeValue

func str(s string) types.AttributeValue { return &types.AttributeValueMemberS{Value: s} }

func putTime(it item, name string, t time.Time) {
	if !t.IsZero() {
		it[name] = &types.AttributeValueMemberN{Value: strconv.FormatInt(t.UnixMilli(), 10)}
	}
}

func getS(it item, name string) string {
	if v, ok := it[name].(*types.AttributeValueMemberS); ok {
		return v.Value
	}
	return ""
}

func getTime(it item, name string) time.Time {
	v, ok := it[name].(*types.AttributeValueMemberN)
	if !ok {
		return time.Time{}
	}
	n, err := strconv.ParseInt(v.Value, 10, 64)
	if err != nil {
		return time.Time{}
	}
	return time.UnixMilli(n).UTC()
}

func keyOf(hash string) item { return item{attrPK: str(KeyPrefix + hash), attrSK: str(keySK)} }
func listKey(id string) item { return item{attrPK: str(ListPK), attrSK: str(id)} }

func encode(k apikey.Key, key item) item {
	it := item{attrHash: str(k.Hash), attrID: str(k.ID), attrPrin: str(k.Principal)}
	if k.Name != "" {
		it[attrName] = str(k.Name)
	}
	putTime(it, attrCreate, k.CreatedAt)
	putTime(it, attrExpire, k.ExpiresAt)
	putTime(it, attrRevoke, k.RevokedAt)
	for n, v := range key {
		it[n] = v
	}
	return it
}

func decode(it item) apikey.Key {
	return apikey.Key{
		ID: getS(it, attrID), Hash: getS(it, attrHash), Principal: getS(it, attrPrin), Name: getS(it, attrName),
		CreatedAt: getTime(it, attrCreate), ExpiresAt: getTime(it, attrExpire), RevokedAt: getTime(it, attrRevoke),
	}
}

func isCanceled(err error) bool {
	var tce *types.TransactionCanceledException
	return errors.As(err, &tce)
}

var notExists = struct {
	cond  *string
	names map[string]string
}{aws.String("attribute_not_exists(#pk)"), map[string]string{"#pk": attrPK}}

// Put implements apikey.Store.
func (s *Store) Put(ctx context.Context, k apikey.Key) error {
	_, err := s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{TableName: s.table, Item: encode(k, keyOf(k.Hash)), ConditionExpression: notExists.cond, ExpressionAttributeNames: notExists.names}},
		{Put: &types.Put{TableName: s.table, Item: encode(k, listKey(k.ID)), ConditionExpression: notExists.cond, ExpressionAttributeNames: notExists.names}},
	}})
	if isCanceled(err) {
		// A condition failed (the hash or id exists) or a concurrent write
		// to the same items won. Either way the key was not stored, unless
		// this is the SDK's retry of a write that landed: then the stored
		// key is this one.
		if cur, lerr := s.Lookup(ctx, k.Hash); lerr == nil && sameKey(cur, k) {
			return nil
		}
		return fmt.Errorf("put API key %s: %w", k.ID, apikey.ErrConflict)
	}
	if err != nil {
		return fmt.Errorf("put API key %s: %w", k.ID, err)
	}
	return nil
}

// Lookup implements apikey.Store.
func (s *Store) Lookup(ctx context.Context, hash string) (apikey.Key, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: s.table, Key: keyOf(hash), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return apikey.Key{}, fmt.Errorf("look up API key: %w", err)
	}
	if out.Item == nil {
		return apikey.Key{}, apikey.ErrNotFound
	}
	return decode(out.Item), nil
}

// Revoke implements apikey.Store.
func (s *Store) Revoke(ctx context.Context, id string, at time.Time) (apikey.Key, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: s.table, Key: listKey(id), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return apikey.Key{}, fmt.Errorf("revoke API key %s: %w", id, err)
	}
	if out.Item == nil {
		return apikey.Key{}, fmt.Errorf("revoke API key %s: %w", id, apikey.ErrNotFound)
	}
	k := decode(out.Item)
	update := func(key item) types.TransactWriteItem {
		return types.TransactWriteItem{Update: &types.Update{
			TableName: s.table, Key: key,
			UpdateExpression:          aws.String("SET #r = if_not_exists(#r, :at)"),
			ConditionExpression:       aws.String("attribute_exists(#pk)"),
			ExpressionAttributeNames:  map[string]string{"#r": attrRevoke, "#pk": attrPK},
			ExpressionAttributeValues: item{":at": &types.AttributeValueMemberN{Value: strconv.FormatInt(at.UnixMilli(), 10)}},
		}}
	}
	_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		update(keyOf(k.Hash)), update(listKey(id)),
	}})
	if err != nil {
		return apikey.Key{}, fmt.Errorf("revoke API key %s: %w", id, err)
	}
	return s.Lookup(ctx, k.Hash)
}

// List implements apikey.Store: one query of the listing partition.
func (s *Store) List(ctx context.Context) ([]apikey.Key, error) {
	var keys []apikey.Key
	p := dynamodb.NewQueryPaginator(s.db, &dynamodb.QueryInput{
		TableName:                 s.table,
		KeyConditionExpression:    aws.String("#pk = :pk"),
		ExpressionAttributeNames:  map[string]string{"#pk": attrPK},
		ExpressionAttributeValues: item{":pk": str(ListPK)},
		ConsistentRead:            aws.Bool(true),
	})
	for p.HasMorePages() {
		out, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("list API keys: %w", err)
		}
		for _, it := range out.Items {
			keys = append(keys, decode(it))
		}
	}
	slices.SortStableFunc(keys, func(a, b apikey.Key) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return keys, nil
}

func sameKey(a, b apikey.Key) bool {
	return a.ID == b.ID && a.Hash == b.Hash && a.Principal == b.Principal && a.Name == b.Name &&
		a.CreatedAt.Equal(b.CreatedAt) && a.ExpiresAt.Equal(b.ExpiresAt) && a.RevokedAt.Equal(b.RevokedAt)
}
