package dynamostore

import (
	"bytes"
	"compress/gzip"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// Keys and attribute names. docs/dynamodb.md describes the layout.
const (
	attrPK = "pk"
	attrSK = "sk"

	// The partition of a request: its state, payload and answer.
	reqPrefix = "req#"
	// The partition of a request's audit trail, apart so that IAM
	// (dynamodb:LeadingKeys) can grant audit writes without decision writes.
	auditPrefix = "audit#"

	skState   = "state"
	skAnswer  = "answer"
	skPayload = "payload#" // + two-digit chunk number
	skCounter = "count"
	// Entries stored before the chain have keys "e#" + biased unix nanos +
	// "#" + append stamp + "#" + random: they sort before the chained ones.
	skChained = "s#"    // a chained entry: + its Seq, 20 digits
	skMark    = "once#" // + elicitation.MarkKey(mark): an AppendOnce mark

	attrTTL = "ttl" // epoch seconds: the end of retention, never expiresAt

	// The state item.
	attrID           = "id"
	attrKind         = "kind"
	attrOwner        = "owner"
	attrStatus       = "status"
	attrCreatedAt    = "createdAt" // unix nanoseconds, as are the other times
	attrExpiresAt    = "expiresAt"
	attrRetainUntil  = "retainUntil"
	attrDecision     = "decision"
	attrDecidedAt    = "decidedAt"
	attrDecidedBy    = "decidedBy"
	attrDecidedVia   = "decidedVia"
	attrDecidedRule  = "decidedRule" // the standing approval that decided
	attrSubmissionID = "submissionId"
	attrAnswerDigest = "answerDigest"
	attrConsumedAt   = "consumedAt"
	attrApprovals    = "approvals" // the quorum, when more than one
	attrApprovers    = "approvers" // the approvals counted so far, as JSON
	attrVersion      = "version"
	attrWriteToken   = "wtok" // names the store call that last wrote the item
	attrRetainShard  = "gpk"  // partition key of the retention index

	// Payload chunks and the answer.
	attrData   = "data"
	attrEnc    = "enc"
	attrChunks = "chunks"

	// Audit entries.
	attrAt        = "at"
	attrAction    = "action"
	attrPrincipal = "principal"
	attrDetail    = "detail"
	attrVia       = "via"
	attrSeq       = "seq"
	attrPrev      = "prev"
	attrHash      = "hash"
	attrIssuer    = "issuer"
)

// The retention index: a sparse, keys-only global secondary index over the
// state items only, so that Cleanup reads what has to go and nothing else.
const (
	retainIndex  = "retain"
	retainShards = 8
)

// Payload encodings.
const (
	encJSON   = "json"
	encJSONGz = "json+gzip"
)

// maxChunk is the most payload bytes one item holds. DynamoDB items are at
// most 400 KB, names and keys included; 350,000 bytes leaves room for both.
const maxChunk = 350_000

// gzipAbove is the encoded payload size above which it is compressed.
const gzipAbove = 2048

type item = map[string]types.AttributeValue

func str(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
func num(v int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(v, 10)}
}

func key(pk, sk string) item { return item{attrPK: str(pk), attrSK: str(sk)} }

func stateKey(id string) item { return key(reqPrefix+id, skState) }

// ttlOf is the TTL attribute for a retention end: seconds, rounded up so
// that DynamoDB never deletes an item before RetainUntil.
func ttlOf(retainUntil time.Time) types.AttributeValue {
	s := retainUntil.Unix()
	if retainUntil.Nanosecond() > 0 {
		s++
	}
	return num(s)
}

func getS(it item, name string) string {
	if v, ok := it[name].(*types.AttributeValueMemberS); ok {
		return v.Value
	}
	return ""
}

func getN(it item, name string) (int64, bool) {
	v, ok := it[name].(*types.AttributeValueMemberN)
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(v.Value, 10, 64)
	return n, err == nil
}

func getB(it item, name string) []byte {
	if v, ok := it[name].(*types.AttributeValueMemberB); ok {
		return v.Value
	}
	return nil
}

// Times are stored as unix nanoseconds (numbers, so that conditions can
// compare them); the zero time is not stored.
func putTime(it item, name string, t time.Time) {
	if !t.IsZero() {
		it[name] = num(t.UnixNano())
	}
}

func getTime(it item, name string) time.Time {
	n, ok := getN(it, name)
	if !ok {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

func putStr(it item, name, v string) {
	if v != "" {
		it[name] = str(v)
	}
}

// stored is a state as read, with the fields only the store sees.
type stored struct {
	elicitation.State
	version    int64
	writeToken string
	counted    bool // its create added to its owner's pending count
}

// shard names one of n partitions prefix+"0" … prefix+(n-1) for id, by
// its FNV-1a hash.
func shard(prefix, id string, n uint32) string {
	h := fnv.New32a()
	h.Write([]byte(id))
	return prefix + strconv.Itoa(int(h.Sum32()%n))
}

func stateItem(st elicitation.State, tok string) item {
	it := stateKey(st.ID)
	it[attrID] = str(st.ID)
	putStr(it, attrKind, string(st.Kind))
	putStr(it, attrOwner, st.Owner)
	it[attrStatus] = str(string(st.Status))
	putTime(it, attrCreatedAt, st.CreatedAt)
	putTime(it, attrExpiresAt, st.ExpiresAt)
	putTime(it, attrRetainUntil, st.RetainUntil)
	it[attrTTL] = ttlOf(st.RetainUntil)
	putStr(it, attrDecision, string(st.Decision))
	putTime(it, attrDecidedAt, st.DecidedAt)
	putStr(it, attrDecidedBy, st.DecidedBy)
	putStr(it, attrDecidedVia, string(st.DecidedVia))
	putStr(it, attrDecidedRule, st.DecidedRule)
	putStr(it, attrSubmissionID, st.SubmissionID)
	putStr(it, attrAnswerDigest, st.AnswerDigest)
	putTime(it, attrConsumedAt, st.ConsumedAt)
	if st.Approvals > 1 {
		it[attrApprovals] = num(int64(st.Approvals))
	}
	if a := approversJSON(st.Approvers); a != "" {
		it[attrApprovers] = str(a)
	}
	it[attrVersion] = num(0)
	it[attrWriteToken] = str(tok)
	it[attrRetainShard] = str(shard("retain#", st.ID, retainShards))
	return it
}

// approversJSON encodes a quorum's approvals ("" for none).
func approversJSON(a []elicitation.Approval) string {
	if len(a) == 0 {
		return ""
	}
	b, _ := json.Marshal(a) // strings and times only: cannot fail
	return string(b)
}

func decodeState(it item) stored {
	v, _ := getN(it, attrVersion)
	quorum, _ := getN(it, attrApprovals)
	var approvers []elicitation.Approval
	if a := getS(it, attrApprovers); a != "" {
		// Written by approversJSON; a damaged value reads as no approvals,
		// which can only make a quorum harder to reach.
		_ = json.Unmarshal([]byte(a), &approvers)
	}
	return stored{
		State: elicitation.State{
			ID:           getS(it, attrID),
			Kind:         elicitation.Kind(getS(it, attrKind)),
			Owner:        getS(it, attrOwner),
			Status:       elicitation.Status(getS(it, attrStatus)),
			CreatedAt:    getTime(it, attrCreatedAt),
			ExpiresAt:    getTime(it, attrExpiresAt),
			RetainUntil:  getTime(it, attrRetainUntil),
			Decision:     elicitation.Decision(getS(it, attrDecision)),
			DecidedAt:    getTime(it, attrDecidedAt),
			DecidedBy:    getS(it, attrDecidedBy),
			DecidedVia:   elicitation.Via(getS(it, attrDecidedVia)),
			DecidedRule:  getS(it, attrDecidedRule),
			SubmissionID: getS(it, attrSubmissionID),
			AnswerDigest: getS(it, attrAnswerDigest),
			ConsumedAt:   getTime(it, attrConsumedAt),
			Approvals:    int(quorum),
			Approvers:    approvers,
		},
		version:    v,
		writeToken: getS(it, attrWriteToken),
		counted:    it[attrCounted] != nil,
	}
}

// payloadItems encodes a payload as JSON, compressed when that pays, in
// chunks of at most maxChunk bytes.
func payloadItems(id string, p elicitation.Payload, ttl types.AttributeValue) ([]item, error) {
	b, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("encode payload: %w", err)
	}
	enc := encJSON
	if len(b) > gzipAbove {
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
		_, _ = zw.Write(b)
		if err := zw.Close(); err != nil {
			return nil, fmt.Errorf("compress payload: %w", err)
		}
		if buf.Len() < len(b) {
			b, enc = buf.Bytes(), encJSONGz
		}
	}
	n := max(1, (len(b)+maxChunk-1)/maxChunk)
	items := make([]item, 0, n)
	for i := range n {
		part := b[i*maxChunk : min(len(b), (i+1)*maxChunk)]
		it := key(reqPrefix+id, fmt.Sprintf("%s%02d", skPayload, i))
		it[attrData] = &types.AttributeValueMemberB{Value: part}
		it[attrTTL] = ttl
		if i == 0 {
			it[attrEnc] = str(enc)
			it[attrChunks] = num(int64(n))
		}
		items = append(items, it)
	}
	return items, nil
}

// decodePayload reassembles chunks given in sort-key order.
func decodePayload(chunks []item) (elicitation.Payload, error) {
	var p elicitation.Payload
	if len(chunks) == 0 {
		return p, fmt.Errorf("payload missing")
	}
	want, _ := getN(chunks[0], attrChunks)
	if int(want) != len(chunks) {
		return p, fmt.Errorf("payload has %d of %d chunks", len(chunks), want)
	}
	var b []byte
	for _, c := range chunks {
		b = append(b, getB(c, attrData)...)
	}
	switch enc := getS(chunks[0], attrEnc); enc {
	case encJSON:
	case encJSONGz:
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			return p, fmt.Errorf("decompress payload: %w", err)
		}
		if b, err = io.ReadAll(zr); err != nil {
			return p, fmt.Errorf("decompress payload: %w", err)
		}
	default:
		return p, fmt.Errorf("payload encoding %q unknown", enc)
	}
	if err := json.Unmarshal(b, &p); err != nil {
		return p, fmt.Errorf("decode payload: %w", err)
	}
	return p, nil
}

func answerItem(id string, a *elicitation.Answer, ttl types.AttributeValue) (item, error) {
	b, err := json.Marshal(a)
	if err != nil {
		return nil, fmt.Errorf("encode answer: %w", err)
	}
	it := key(reqPrefix+id, skAnswer)
	it[attrData] = str(string(b))
	it[attrTTL] = ttl
	return it, nil
}

func decodeAnswer(it item) (*elicitation.Answer, error) {
	var a elicitation.Answer
	if err := json.Unmarshal([]byte(getS(it, attrData)), &a); err != nil {
		return nil, fmt.Errorf("decode answer: %w", err)
	}
	return &a, nil
}

// sortable formats n so that the strings sort as the numbers do, negative
// ones included.
func sortable(n int64) string {
	return fmt.Sprintf("%020d", uint64(n)^(1<<63))
}

// auditItem is entry e of id's trail, chained (elicitation.ChainEntry): its
// sort key is its Seq, so that a put conditioned on the key's absence lands
// only if no other writer chained an entry to the same head, and the trail
// reads in chain order. tok names the call that writes it.
func auditItem(id string, e elicitation.AuditEntry, tok string, ttl types.AttributeValue) item {
	it := key(auditPrefix+id, chainKey(e.Seq))
	putTime(it, attrAt, e.At)
	it[attrAction] = str(string(e.Action))
	putStr(it, attrPrincipal, e.Principal)
	putStr(it, attrDetail, e.Detail)
	putStr(it, attrVia, string(e.Via))
	it[attrSeq] = num(int64(e.Seq))
	putStr(it, attrPrev, e.Prev)
	it[attrHash] = str(e.Hash)
	it[attrWriteToken] = str(tok)
	putStr(it, attrIssuer, e.Issuer)
	it[attrTTL] = ttl
	return it
}

// chainKey is the sort key of the chained entry seq: zero-padded, so that
// the keys sort as the numbers do.
func chainKey(seq uint64) string { return fmt.Sprintf("%s%020d", skChained, seq) }

// markItem is the item of an AppendOnce mark: its key is the mark's, so
// that a put conditioned on its absence succeeds once; tok names the call
// that wrote it.
func markItem(id, mark, tok string, ttl types.AttributeValue) item {
	it := key(auditPrefix+id, skMark+elicitation.MarkKey(mark))
	it[attrWriteToken] = str(tok)
	it[attrTTL] = ttl
	return it
}

func decodeAudit(it item) elicitation.AuditEntry {
	seq, _ := getN(it, attrSeq)
	return elicitation.AuditEntry{
		At:        getTime(it, attrAt),
		Action:    elicitation.Action(getS(it, attrAction)),
		Principal: getS(it, attrPrincipal),
		Detail:    getS(it, attrDetail),
		Via:       elicitation.Via(getS(it, attrVia)),
		Seq:       uint64(max(seq, 0)),
		Prev:      getS(it, attrPrev),
		Hash:      getS(it, attrHash),
		Issuer:    getS(it, attrIssuer),
	}
}

// The counter item holds, per bounded action, how many entries are stored
// ("n_" + action) and how many were counted but not stored ("o_" + action).
func storedCountAttr(a elicitation.Action) string  { return "n_" + string(a) }
func omittedCountAttr(a elicitation.Action) string { return "o_" + string(a) }

func newToken() string { return rand.Text() }
