package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	bolt "go.etcd.io/bbolt"

	"github.com/mcp-elicitation/elicitation/internal/boltstore"
	"github.com/mcp-elicitation/elicitation/internal/dynamostore"
	"github.com/mcp-elicitation/elicitation/internal/dynamostore/dynamotest"
	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/elicitation/storetest"
)

// A tampering is done to a trail's entries as stored, in order; want is
// what `audit verify` says of it.
var tamperings = []struct {
	name string
	edit func(id string, e []elicitation.AuditEntry) []elicitation.AuditEntry
	want string
}{
	{"intact", func(_ string, e []elicitation.AuditEntry) []elicitation.AuditEntry { return e }, "ok: 5 chained, head 5:"},
	{"edited", func(_ string, e []elicitation.AuditEntry) []elicitation.AuditEntry {
		e[2].Principal = "mallory"
		return e
	}, "BROKEN: audit entry 2 (seq 3) edited: its hash does not match its fields"},
	{"removed", func(_ string, e []elicitation.AuditEntry) []elicitation.AuditEntry { return slices.Delete(e, 2, 3) },
		"BROKEN: audit entry 2 (seq 4) removed: seq 3 is missing before it"},
	{"reordered", func(_ string, e []elicitation.AuditEntry) []elicitation.AuditEntry {
		e[2], e[3] = e[3], e[2]
		return e
	}, "BROKEN: audit entry 2 (seq 4) reordered: seq 3 comes after it"},
	{"inserted", func(id string, e []elicitation.AuditEntry) []elicitation.AuditEntry {
		// A forger who knows the encoding chains a decision after entry 1.
		forged := elicitation.ChainEntry(id, e[1].Head(), elicitation.AuditEntry{At: e[1].At, Action: elicitation.ActionDecided, Principal: "mallory", Detail: "submitted"})
		return slices.Insert(e, 2, forged)
	}, "BROKEN: audit entry 3 (seq 3) inserted: seq 3 already read"},
}

// trails creates one request per tampering in s, each with a trail of five
// chained entries, and returns their ids.
func trails(t *testing.T, s elicitation.Store) []string {
	t.Helper()
	ctx := context.Background()
	var ids []string
	for range tamperings {
		r := storetest.NewApproval(t, time.Hour)
		if err := s.Create(ctx, r, elicitation.AuditEntry{At: storetest.T0, Action: elicitation.ActionCreated, Principal: "alice"}); err != nil {
			t.Fatal(err)
		}
		for i := range 4 {
			e := elicitation.AuditEntry{At: storetest.T0.Add(time.Duration(i+1) * time.Second), Action: elicitation.ActionRendered, Principal: "reviewer", Detail: strconv.Itoa(i)}
			if err := s.Append(ctx, r.State.ID, e); err != nil {
				t.Fatal(err)
			}
		}
		ids = append(ids, r.State.ID)
	}
	return ids
}

// verifyTampered runs `audit verify` with flags on the tampered trails:
// all of them, then the intact one alone, by id and with its head.
func verifyTampered(t *testing.T, flags []string, ids []string, head elicitation.AuditHead) {
	t.Helper()
	var out bytes.Buffer
	err := run(context.Background(), append(append([]string{"audit", "verify"}, flags...), ids...), &out, io.Discard, noEnv)
	if err == nil || !strings.Contains(err.Error(), "4 of 5 trails broken") {
		t.Errorf("audit verify: %v, want 4 of 5 broken", err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	for i, c := range tamperings {
		if want := ids[i] + ": " + c.want; i >= len(lines) || !strings.HasPrefix(lines[i], want) {
			t.Errorf("%s: got\n%s\nwant a line starting %q", c.name, out.String(), want)
		}
	}
	// With no ids, every request's trail.
	out.Reset()
	err = run(context.Background(), append([]string{"audit", "verify"}, flags...), &out, io.Discard, noEnv)
	if err == nil || strings.Count(out.String(), "BROKEN") != 4 || strings.Count(out.String(), ": ok") != 1 {
		t.Errorf("audit verify of all: %v\n%s", err, out.String())
	}
	out.Reset()
	if err := run(context.Background(), append(append([]string{"audit", "verify"}, flags...), "--head", head.String(), ids[0]), &out, io.Discard, noEnv); err != nil {
		t.Errorf("audit verify --head of the intact trail: %v\n%s", err, out.String())
	}
	wrong := elicitation.AuditHead{Seq: 6, Hash: strings.Repeat("0", 64)}
	out.Reset()
	if err := run(context.Background(), append(append([]string{"audit", "verify"}, flags...), "--head", wrong.String(), ids[0]), &out, io.Discard, noEnv); err == nil || !strings.Contains(out.String(), "does not reach head 6:") {
		t.Errorf("audit verify --head with a head the trail lacks: %v\n%s", err, out.String())
	}
}

func TestAuditVerifyBolt(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "elicitation.db")
	s, err := boltstore.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	ids := trails(t, s)
	tr, err := s.Audit(context.Background(), ids[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		for i, c := range tamperings {
			b := tx.Bucket([]byte("audit")).Bucket([]byte(ids[i]))
			var entries []elicitation.AuditEntry
			var keys [][]byte
			if err := b.ForEach(func(k, v []byte) error {
				var e elicitation.AuditEntry
				keys = append(keys, slices.Clone(k))
				entries = append(entries, e)
				return json.Unmarshal(v, &entries[len(entries)-1])
			}); err != nil {
				return err
			}
			for _, k := range keys {
				if err := b.Delete(k); err != nil {
					return err
				}
			}
			for n, e := range c.edit(ids[i], entries) {
				v, _ := json.Marshal(e)
				if err := b.Put(binary.BigEndian.AppendUint64(nil, uint64(n+1)), v); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if cerr := db.Close(); err != nil || cerr != nil {
		t.Fatal(err, cerr)
	}
	verifyTampered(t, []string{"--data-dir", dir}, ids, tr.Entries[4].Head())
}

func TestAuditVerifyDynamoDB(t *testing.T) {
	endpoint := dynamotest.Endpoint(t)
	db := dynamotest.Client(endpoint)
	table := dynamotest.Table(t, db)
	t.Setenv("AWS_ENDPOINT_URL_DYNAMODB", endpoint)
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_ACCESS_KEY_ID", "dummy")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "dummy")
	ctx := context.Background()
	s := dynamostore.New(db, table, dynamostore.Options{})
	ids := trails(t, s)
	tr, err := s.Audit(ctx, ids[0])
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range tamperings {
		rewriteDynamoTrail(t, db, table, ids[i], c.edit(ids[i], slices.Clone(tr0(t, s, ids[i]))))
	}
	verifyTampered(t, []string{"--store", "dynamodb", "--table", table}, ids, tr.Entries[4].Head())
}

func tr0(t *testing.T, s elicitation.Store, id string) []elicitation.AuditEntry {
	t.Helper()
	tr, err := s.Audit(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return tr.Entries
}

// rewriteDynamoTrail replaces id's chained audit items with entries, one
// item each, their sort keys in the order given (as a tamperer with write
// access to the table would), keeping each entry's attributes as written.
func rewriteDynamoTrail(t *testing.T, db *dynamodb.Client, table, id string, entries []elicitation.AuditEntry) {
	t.Helper()
	ctx := context.Background()
	pk := &types.AttributeValueMemberS{Value: "audit#" + id}
	out, err := db.Query(ctx, &dynamodb.QueryInput{
		TableName: aws.String(table), ConsistentRead: aws.Bool(true),
		KeyConditionExpression:    aws.String("pk = :pk AND begins_with(sk, :s)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": pk, ":s": &types.AttributeValueMemberS{Value: "s#"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range out.Items {
		if _, err := db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(table), Key: map[string]types.AttributeValue{"pk": pk, "sk": it["sk"]}}); err != nil {
			t.Fatal(err)
		}
	}
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	n := func(v int64) types.AttributeValue {
		return &types.AttributeValueMemberN{Value: strconv.FormatInt(v, 10)}
	}
	for i, e := range entries {
		it := map[string]types.AttributeValue{
			"pk": pk, "sk": s(fmt.Sprintf("s#%020d", i+1)), "at": n(e.At.UnixNano()), "action": s(string(e.Action)),
			"principal": s(e.Principal), "seq": n(int64(e.Seq)), "hash": s(e.Hash), "ttl": n(time.Now().Add(time.Hour).Unix()),
		}
		if e.Detail != "" {
			it["detail"] = s(e.Detail)
		}
		if e.Prev != "" {
			it["prev"] = s(e.Prev)
		}
		if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: it}); err != nil {
			t.Fatal(err)
		}
	}
}

// Ids may start with "-" (base64url): wherever they stand among the
// flags they are ids, not unknown flags; a flag's value stays its own.
func TestSplitOperands(t *testing.T) {
	t.Parallel()
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.String("head", "", "")
	fs.Bool("v", false, "")
	for _, tc := range []struct {
		args, flags, ids []string
	}{
		{[]string{"-llf7n1jcHEM5ioeQ0mmqQ", "abc"}, nil, []string{"-llf7n1jcHEM5ioeQ0mmqQ", "abc"}},
		{[]string{"--head", "5:ab", "-x1"}, []string{"--head", "5:ab"}, []string{"-x1"}},
		{[]string{"-v", "-x1", "--head=1:a", "y"}, []string{"-v", "--head=1:a"}, []string{"-x1", "y"}},
		{[]string{"--", "-v", "--head"}, nil, []string{"-v", "--head"}},
	} {
		flags, ids := splitOperands(fs, tc.args)
		if fmt.Sprint(flags) != fmt.Sprint(tc.flags) || fmt.Sprint(ids) != fmt.Sprint(tc.ids) {
			t.Errorf("splitOperands(%q) = %q, %q; want %q, %q", tc.args, flags, ids, tc.flags, tc.ids)
		}
	}
}
