// Package dynamostore is the DynamoDB implementation of elicitation.Store:
// one table, a small state item that polls read, the payload and the answer
// apart from it, and the audit trail under its own partition key.
// docs/dynamodb.md describes the items, the access patterns and the IAM each
// function needs.
package dynamostore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

var _ elicitation.Store = (*Store)(nil)

// DefaultPollInterval is how often a Watch reads the state item (unless
// its caller asks for another interval): at most five
// reads a second per waiting call, and a decision seen within 200 ms plus
// one read's latency (SPEC §7).
const DefaultPollInterval = 200 * time.Millisecond

// Options configure a Store. The zero value takes the defaults.
type Options struct {
	// PollInterval is how often a Watch reads the state item unless its
	// caller asks for another interval; default DefaultPollInterval.
	PollInterval time.Duration
	// PollFailureTolerance is how long a Watch keeps polling through
	// failed reads (each already retried by the SDK) before it wakes its
	// caller, whose own read then meets the failure; default
	// DefaultPollFailureTolerance. A short outage does not end a
	// long-poll; a lasting one surfaces as an error.
	PollFailureTolerance time.Duration
}

// DefaultPollFailureTolerance is the default Options.PollFailureTolerance.
const DefaultPollFailureTolerance = 5 * time.Second

// Store is an elicitation.Store on one DynamoDB table. It is safe for
// concurrent use; any number of Stores, in any number of processes, may
// share a table.
type Store struct {
	db        *dynamodb.Client
	table     *string
	poll      time.Duration
	tolerance time.Duration
	retryer   aws.Retryer       // the client's: its delays space the store's own retries
	wakes     elicitation.Wakes // the watches a resolution through this Store wakes
}

// New returns a Store on table through client. The table must exist with
// the layout CreateTable makes. Build the client with NewClient (or give it
// Retryer) so that throttling is retried within each call's deadline.
func New(client *dynamodb.Client, table string, opts Options) *Store {
	if opts.PollInterval <= 0 {
		opts.PollInterval = DefaultPollInterval
	}
	if opts.PollFailureTolerance <= 0 {
		opts.PollFailureTolerance = DefaultPollFailureTolerance
	}
	s := &Store{db: client, table: aws.String(table), poll: opts.PollInterval, tolerance: opts.PollFailureTolerance, retryer: client.Options().Retryer}
	if s.retryer == nil {
		s.retryer = Retryer()
	}
	return s
}

// conflictAttempts bounds how often a write that lost a race with another
// transaction on the same items (TransactionConflict, or a version that moved
// between the read and the write) starts again.
const conflictAttempts = 8

// again decides whether a write whose attempt lost a race (err) starts
// again: after limit attempts (conflictAttempts, or chainAttempts for an
// audit entry's place) it gives up; otherwise it waits first as the
// client's retryer waits before a retry (a random while, growing with
// attempt), so that contenders spread out. This is the store's one backoff.
func (s *Store) again(ctx context.Context, attempt, limit int, err error) error {
	if attempt >= limit {
		return fmt.Errorf("gave up after %d transaction conflicts: %w", attempt, err)
	}
	d, derr := s.retryer.RetryDelay(attempt, err)
	if derr != nil {
		return errors.Join(err, derr)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return errors.Join(err, ctx.Err())
	case <-t.C:
		return nil
	}
}

// names maps every attribute name used in an expression to a placeholder:
// "status", "ttl", "owner" and others are reserved words.
func names(ns ...string) map[string]string {
	m := make(map[string]string, len(ns))
	for _, n := range ns {
		m["#"+n] = n
	}
	return m
}

// maxKeyBytes is the most bytes a partition key value may hold; an id too
// long for one names no request (rather than failing with a validation
// error, which a caller would see as an internal error).
const maxKeyBytes = 2048

// unkeyable reports whether id is too long for its partition keys.
func unkeyable(id string) bool { return len(auditPrefix)+len(id) > maxKeyBytes }

// read reads a request's state item with a strongly consistent read.
func (s *Store) read(ctx context.Context, id string) (stored, error) {
	if unkeyable(id) {
		return stored{}, elicitation.ErrNotFound
	}
	it, err := s.get(ctx, stateKey(id))
	if err != nil {
		return stored{}, err
	}
	if it == nil {
		return stored{}, elicitation.ErrNotFound
	}
	return decodeState(it), nil
}

// get reads the item at k with a strongly consistent read (nil: none).
func (s *Store) get(ctx context.Context, k item) (item, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: s.table, Key: k, ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, err
	}
	return out.Item, nil
}

// Create implements elicitation.Store.
func (s *Store) Create(ctx context.Context, r elicitation.Request, created elicitation.AuditEntry) error {
	id := r.State.ID
	if id == "" {
		return fmt.Errorf("create: the request has no id")
	}
	tok := newToken()
	ttl := ttlOf(r.State.RetainUntil)
	chunks, err := payloadItems(id, r.Payload, ttl)
	if err != nil {
		return fmt.Errorf("create %s: %w", id, err)
	}
	stItem := stateItem(r.State, tok)
	addPending(stItem, r)
	addOwned(stItem, r.State)
	tx := []types.TransactWriteItem{{Put: &types.Put{
		TableName: s.table, Item: stItem,
		ConditionExpression:      aws.String("attribute_not_exists(#pk)"),
		ExpressionAttributeNames: names(attrPK),
	}}}
	for _, c := range chunks {
		tx = append(tx, types.TransactWriteItem{Put: &types.Put{TableName: s.table, Item: c}})
	}
	// The first entry of a new trail: the state's condition makes this
	// write the first of the request's.
	tx = append(tx, types.TransactWriteItem{Put: &types.Put{TableName: s.table, Item: auditItem(id, elicitation.ChainEntry(id, elicitation.AuditHead{}, created), tok, ttl)}})
	tx = append(tx, putDeliveries(s.table, r.Outbox)...)
	counter := 0 // the pending count's item in tx, if any
	if r.MaxPending > 0 {
		stItem[attrCounted] = num(1)
		counter = len(tx)
		tx = append(tx, s.countPending(r))
	}
	for attempt := 1; ; attempt++ {
		err := s.transact(ctx, tx)
		if err == nil {
			return nil
		}
		if !isCanceled(err) {
			return fmt.Errorf("create %s: %w", id, err)
		}
		if counter > 0 && conditionFailed(err, counter) {
			room, rerr := s.recount(ctx, r)
			switch {
			case rerr != nil:
				return fmt.Errorf("create %s: %w", id, rerr)
			case !room || attempt >= conflictAttempts:
				return fmt.Errorf("create %s: %d pending: %w", id, r.MaxPending, elicitation.ErrTooManyPending)
			}
			continue
		}
		cur, rerr := s.read(ctx, id)
		switch {
		case errors.Is(rerr, elicitation.ErrNotFound):
			// Lost a race with a concurrent transaction: try again.
			if aerr := s.again(ctx, attempt, conflictAttempts, err); aerr != nil {
				return fmt.Errorf("create %s: %w", id, aerr)
			}
			continue
		case rerr != nil:
			return fmt.Errorf("create %s: %w", id, errors.Join(err, rerr))
		case cur.writeToken == tok:
			return nil // an earlier attempt of this call landed; its response was lost
		}
		return fmt.Errorf("create %s: %w", id, elicitation.ErrConflict)
	}
}

// State implements elicitation.Store.
func (s *Store) State(ctx context.Context, id string) (elicitation.State, error) {
	st, err := s.read(ctx, id)
	if err != nil {
		return elicitation.State{}, fmt.Errorf("state %s: %w", id, err)
	}
	return st.State, nil
}

// Load implements elicitation.Store: one strongly consistent query of the
// request's partition (state, payload chunks, answer).
func (s *Store) Load(ctx context.Context, id string) (elicitation.Record, error) {
	var (
		rec    elicitation.Record
		state  item
		chunks []item
		answer item
	)
	if unkeyable(id) {
		return rec, fmt.Errorf("load: %w", elicitation.ErrNotFound)
	}
	err := s.query(ctx, reqPrefix+id, false, func(it item) {
		switch sk := getS(it, attrSK); {
		case sk == skState:
			state = it
		case sk == skAnswer:
			answer = it
		case len(sk) > len(skPayload) && sk[:len(skPayload)] == skPayload:
			chunks = append(chunks, it)
		}
	})
	if err != nil {
		return rec, fmt.Errorf("load %s: %w", id, err)
	}
	if state == nil {
		return rec, fmt.Errorf("load %s: %w", id, elicitation.ErrNotFound)
	}
	rec.State = decodeState(state).State
	if rec.Payload, err = decodePayload(chunks); err != nil {
		return rec, fmt.Errorf("load %s: %w", id, err)
	}
	if answer != nil {
		if rec.Answer, err = decodeAnswer(answer); err != nil {
			return rec, fmt.Errorf("load %s: %w", id, err)
		}
	}
	return rec, nil
}

// query reads a whole partition in sort-key order, page by page.
func (s *Store) query(ctx context.Context, pk string, keysOnly bool, fn func(item)) error {
	in := byPK(pk)
	if keysOnly {
		in.ProjectionExpression = aws.String("#pk, #sk")
		in.ExpressionAttributeNames = names(attrPK, attrSK)
	}
	return s.each(ctx, in, func(it item) error { fn(it); return nil })
}

// byPK is the strongly consistent query of the partition pk.
func byPK(pk string) *dynamodb.QueryInput {
	return &dynamodb.QueryInput{
		KeyConditionExpression:    aws.String("#pk = :pk"),
		ExpressionAttributeNames:  names(attrPK),
		ExpressionAttributeValues: item{":pk": str(pk)},
		ConsistentRead:            aws.Bool(true),
	}
}

// errEnough, returned by each's fn, ends the query early without error.
var errEnough = errors.New("enough")

// each runs the query in on the store's table, page by page, and calls fn
// with each item in order, until fn returns an error (errEnough: none).
func (s *Store) each(ctx context.Context, in *dynamodb.QueryInput, fn func(item) error) error {
	in.TableName = s.table
	p := dynamodb.NewQueryPaginator(s.db, in)
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return err
		}
		for _, it := range page.Items {
			if err := fn(it); errors.Is(err, errEnough) {
				return nil
			} else if err != nil {
				return err
			}
		}
	}
	return nil
}

// Resolve implements elicitation.Store. The state update (conditioned on
// "pending and not yet expired"), the answer and the audit entry are one
// transaction.
func (s *Store) Resolve(ctx context.Context, id string, t elicitation.Resolution) (elicitation.State, error) {
	cur, err := s.read(ctx, id)
	for attempt := 1; ; attempt++ {
		if err != nil {
			return elicitation.State{}, fmt.Errorf("resolve %s: %w", id, err)
		}
		if done, cerr := t.Check(cur.State); done {
			if cerr != nil {
				cerr = fmt.Errorf("resolve %s: %w", id, cerr)
			}
			return cur.State, cerr
		}
		tok := newToken()
		head, herr := s.head(ctx, id)
		if herr != nil {
			return elicitation.State{}, fmt.Errorf("resolve %s: %w", id, herr)
		}
		tx, berr := s.resolveItems(id, cur, t, tok, head)
		if berr != nil {
			return elicitation.State{}, fmt.Errorf("resolve %s: %w", id, berr)
		}
		werr := s.transact(ctx, tx)
		if werr == nil {
			s.wakes.Wake(id)
			return t.Step(cur.State).Next, nil
		} else if !isCanceled(werr) {
			// Ambiguous: the write may or may not have landed. A retry with
			// the same SubmissionID is answered by what the state says.
			return elicitation.State{}, fmt.Errorf("resolve %s: %w", id, werr)
		}
		cur, err = s.read(ctx, id)
		if err == nil && cur.writeToken == tok {
			s.wakes.Wake(id)
			return cur.State, nil // an earlier attempt of this call landed
		}
		if err == nil && cur.Status == elicitation.StatusPending && t.At.Before(cur.ExpiresAt) {
			// Still open: the transaction lost a race with another one.
			if aerr := s.backOff(ctx, attempt, werr, tx); aerr != nil {
				return cur.State, fmt.Errorf("resolve %s: %w", id, aerr)
			}
		}
	}
}

func (s *Store) resolveItems(id string, cur stored, t elicitation.Resolution, tok string, head elicitation.AuditHead) ([]types.TransactWriteItem, error) {
	switch t.Status {
	case elicitation.StatusSubmitted, elicitation.StatusDeclined, elicitation.StatusCanceled:
	default:
		return nil, fmt.Errorf("a resolution's status must be submitted, declined or canceled, not %q", t.Status)
	}
	step := t.Step(cur.State)
	next := step.Next
	ttl := ttlOf(cur.RetainUntil)
	set := "SET #status = :status, #wtok = :wtok, #version = #version + :one"
	cond := "#status = :pending AND #expiresAt > :at"
	vals := item{
		":status": str(string(next.Status)),
		":wtok":   str(tok), ":one": num(1),
		":pending": str(string(elicitation.StatusPending)), ":at": num(t.At.UnixNano()),
	}
	ns := names(attrStatus, attrWriteToken, attrVersion, attrExpiresAt)
	// The attributes of next's state item that differ from cur's (what
	// the resolution decided), set as stateItem writes them.
	decided := stateItem(next, tok)
	for _, name := range []string{attrDecidedAt, attrApprovers, attrDecision, attrDecidedBy, attrSubmissionID, attrAnswerDigest, attrDecidedVia, attrDecidedRule} {
		if v, ok := decided[name]; ok && (name != attrApprovers || cur.Quorum() > 1) {
			set += ", #" + name + " = :" + name
			vals[":"+name] = v
			ns["#"+name] = name
		}
	}
	if cur.Quorum() > 1 {
		// A quorum's approvals accumulate: the write holds only if no
		// other approval (or decision) landed since cur was read.
		cond += " AND #version = :version"
		vals[":version"] = num(cur.version)
	}
	if next.Status != elicitation.StatusPending {
		// Leaves the inbox index.
		set += " REMOVE #" + attrPendingPK
		ns["#"+attrPendingPK] = attrPendingPK
	}
	tx := []types.TransactWriteItem{{Update: &types.Update{
		TableName: s.table, Key: stateKey(id),
		UpdateExpression:          aws.String(set),
		ConditionExpression:       aws.String(cond),
		ExpressionAttributeNames:  ns,
		ExpressionAttributeValues: vals,
	}}}
	if cur.counted && next.Status != elicitation.StatusPending {
		tx = append(tx, s.uncountPending(cur.Owner))
	}
	if step.Answer != nil {
		a, err := answerItem(id, step.Answer, ttl)
		if err != nil {
			return nil, err
		}
		tx = append(tx, types.TransactWriteItem{Put: &types.Put{TableName: s.table, Item: a}})
	}
	tx = append(tx, s.chained(id, head, step.Entry, tok, ttl))
	tx = append(tx, putDeliveries(s.table, step.Outbox)...)
	tx = append(tx, withdrawDeliveries(s.table, step.Withdraw)...)
	return tx, nil
}

// Consume implements elicitation.Store.
func (s *Store) Consume(ctx context.Context, id string, entry elicitation.AuditEntry) (elicitation.State, error) {
	for attempt := 1; ; attempt++ {
		cur, err := s.read(ctx, id)
		if err != nil {
			return elicitation.State{}, fmt.Errorf("consume %s: %w", id, err)
		}
		switch cur.Status {
		case elicitation.StatusSubmitted, elicitation.StatusDeclined:
		case elicitation.StatusConsumed:
			if err := s.putEntry(ctx, id, entry, ttlOf(cur.RetainUntil)); err != nil {
				return elicitation.State{}, fmt.Errorf("consume %s: %w", id, err)
			}
			return cur.State, nil
		default:
			return cur.State, fmt.Errorf("consume %s: status %s: %w", id, cur.Status, elicitation.ErrConflict)
		}
		tok := newToken()
		head, err := s.head(ctx, id)
		if err != nil {
			return elicitation.State{}, fmt.Errorf("consume %s: %w", id, err)
		}
		next := cur.State
		next.Status, next.ConsumedAt = elicitation.StatusConsumed, entry.At
		tx := []types.TransactWriteItem{
			{Update: &types.Update{
				TableName: s.table, Key: stateKey(id),
				UpdateExpression:         aws.String("SET #status = :consumed, #consumedAt = :at, #wtok = :wtok, #version = #version + :one"),
				ConditionExpression:      aws.String("#version = :version"),
				ExpressionAttributeNames: names(attrStatus, attrConsumedAt, attrWriteToken, attrVersion),
				ExpressionAttributeValues: item{
					":consumed": str(string(elicitation.StatusConsumed)), ":at": num(entry.At.UnixNano()),
					":wtok": str(tok), ":one": num(1), ":version": num(cur.version),
				},
			}},
			s.chained(id, head, entry, tok, ttlOf(cur.RetainUntil)),
		}
		err = s.transact(ctx, tx)
		if err == nil {
			s.wakes.Wake(id)
			return next, nil
		}
		if !isCanceled(err) {
			return elicitation.State{}, fmt.Errorf("consume %s: %w", id, err)
		}
		if again, rerr := s.read(ctx, id); rerr == nil && again.writeToken == tok {
			return again.State, nil // an earlier attempt of this call landed
		}
		if aerr := s.backOff(ctx, attempt, err, tx); aerr != nil {
			return elicitation.State{}, fmt.Errorf("consume %s: %w", id, aerr)
		}
	}
}

// Append implements elicitation.Store. An entry of a bounded action is
// stored together with the increment of its stored count, on condition that
// the count is below AuditCap; beyond it only the omitted count grows.
func (s *Store) Append(ctx context.Context, id string, e elicitation.AuditEntry) error {
	cur, err := s.read(ctx, id)
	if err != nil {
		return fmt.Errorf("append %s: %w", id, err)
	}
	ttl := ttlOf(cur.RetainUntil)
	if !e.Action.Bounded() {
		if err := s.putEntry(ctx, id, e, ttl); err != nil {
			return fmt.Errorf("append %s: %w", id, err)
		}
		return nil
	}
	counter := key(auditPrefix+id, skCounter)
	n := storedCountAttr(e.Action)
	tok := newToken()
	for attempt := 1; ; attempt++ {
		head, err := s.head(ctx, id)
		if err != nil {
			return fmt.Errorf("append %s: %w", id, err)
		}
		tx := []types.TransactWriteItem{
			{Update: &types.Update{
				TableName: s.table, Key: counter,
				UpdateExpression:          aws.String("SET #ttl = :ttl ADD #n :one"),
				ConditionExpression:       aws.String("attribute_not_exists(#n) OR #n < :cap"),
				ExpressionAttributeNames:  map[string]string{"#ttl": attrTTL, "#n": n},
				ExpressionAttributeValues: item{":ttl": ttl, ":one": num(1), ":cap": num(elicitation.AuditCap)},
			}},
			s.chained(id, head, e, tok, ttl),
		}
		err = s.transact(ctx, tx)
		if err == nil {
			return nil
		}
		switch {
		case !isCanceled(err):
			return fmt.Errorf("append %s: %w", id, err)
		case conditionFailed(err, 0):
			_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
				TableName: s.table, Key: counter,
				UpdateExpression:          aws.String("SET #ttl = :ttl ADD #o :one"),
				ExpressionAttributeNames:  map[string]string{"#ttl": attrTTL, "#o": omittedCountAttr(e.Action)},
				ExpressionAttributeValues: item{":ttl": ttl, ":one": num(1)},
			})
			if err != nil {
				return fmt.Errorf("append %s: count omitted entry: %w", id, err)
			}
			return nil
		case conditionFailed(err, 1):
			if mine, rerr := s.wroteEntry(ctx, tx[1].Put.Item, tok); rerr != nil || mine {
				return rerr // nil: an earlier attempt of this call landed
			}
		}
		if aerr := s.backOff(ctx, attempt, err, tx); aerr != nil {
			return fmt.Errorf("append %s: %w", id, aerr)
		}
	}
}

// AppendOnce implements elicitation.Store: one transaction puts the mark's
// item (its sort key derived from the mark) on condition that it is absent,
// and the entry. A put refused by that condition was another call's, unless
// the item carries this call's write token (its own earlier attempt).
func (s *Store) AppendOnce(ctx context.Context, id, mark string, e elicitation.AuditEntry) (bool, error) {
	if mark == "" {
		return false, fmt.Errorf("append once %s: empty mark", id)
	}
	cur, err := s.read(ctx, id)
	if err != nil {
		return false, fmt.Errorf("append once %s: %w", id, err)
	}
	ttl := ttlOf(cur.RetainUntil)
	tok := newToken()
	m := markItem(id, mark, tok, ttl)
	for attempt := 1; ; attempt++ {
		head, err := s.head(ctx, id)
		if err != nil {
			return false, fmt.Errorf("append once %s: %w", id, err)
		}
		tx := []types.TransactWriteItem{
			{Put: &types.Put{
				TableName: s.table, Item: m,
				ConditionExpression:      aws.String("attribute_not_exists(#pk)"),
				ExpressionAttributeNames: names(attrPK),
			}},
			s.chained(id, head, e, tok, ttl),
		}
		err = s.transact(ctx, tx)
		if err == nil {
			return true, nil
		}
		if !isCanceled(err) {
			return false, fmt.Errorf("append once %s: %w", id, err)
		}
		if conditionFailed(err, 0) {
			mine, err := s.wroteEntry(ctx, m, tok)
			if err != nil {
				return false, fmt.Errorf("append once %s: %w", id, err)
			}
			return mine, nil
		}
		if aerr := s.backOff(ctx, attempt, err, tx); aerr != nil {
			return false, fmt.Errorf("append once %s: %w", id, aerr)
		}
	}
}

// Audit implements elicitation.Store.
func (s *Store) Audit(ctx context.Context, id string) (elicitation.AuditTrail, error) {
	var tr elicitation.AuditTrail
	if _, err := s.read(ctx, id); err != nil {
		return tr, fmt.Errorf("audit %s: %w", id, err)
	}
	err := s.query(ctx, auditPrefix+id, false, func(it item) {
		sk := getS(it, attrSK)
		if strings.HasPrefix(sk, skMark) {
			return // a mark, not an entry
		}
		if sk == skCounter {
			for _, a := range elicitation.BoundedActions {
				o, _ := getN(it, omittedCountAttr(a))
				tr.Omit(a, int(o))
			}
			return
		}
		tr.Entries = append(tr.Entries, decodeAudit(it))
	})
	if err != nil {
		return elicitation.AuditTrail{}, fmt.Errorf("audit %s: %w", id, err)
	}
	return tr, nil
}

// transact runs one TransactWriteItems. The SDK gives it a client request
// token, so its own retries of a write that landed are idempotent.
func (s *Store) transact(ctx context.Context, tx []types.TransactWriteItem) error {
	_, err := s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: tx})
	return err
}

// isCanceled reports whether err is a transaction canceled by a failed
// condition or a conflicting transaction: nothing was written.
func isCanceled(err error) bool {
	var tce *types.TransactionCanceledException
	return errors.As(err, &tce)
}

// condFailed reports whether err is a single write's failed condition.
func condFailed(err error) bool {
	var ccf *types.ConditionalCheckFailedException
	return errors.As(err, &ccf)
}

// conditionFailed reports whether err is a transaction canceled by the
// condition of its item i.
func conditionFailed(err error, i int) bool {
	var tce *types.TransactionCanceledException
	return errors.As(err, &tce) && i < len(tce.CancellationReasons) &&
		aws.ToString(tce.CancellationReasons[i].Code) == "ConditionalCheckFailed"
}

// Cleanup implements elicitation.Store. It queries the retention index (a
// keys-only index of state items by retainUntil, in retainShards
// partitions) for requests whose retention ended, deletes each one's audit
// partition and request partition, the state item last, so that an
// interrupted cleanup is finished by the next one.
func (s *Store) Cleanup(ctx context.Context, now time.Time) (int, error) {
	removed := 0
	err := s.eachRetained(ctx, &now, func(id string) error {
		ok, err := s.remove(ctx, id, now)
		if ok {
			removed++
		}
		if err != nil {
			return fmt.Errorf("remove %s: %w", id, err)
		}
		return nil
	})
	if err != nil {
		return removed, fmt.Errorf("cleanup: %w", err)
	}
	if err := s.cleanupOutbox(ctx, now); err != nil {
		return removed, err
	}
	return removed, nil
}

// remove deletes one request whose retention ended: its audit partition,
// its payload and answer, then its state item on condition that its
// retention did end (the index is eventually consistent).
func (s *Store) remove(ctx context.Context, id string, now time.Time) (bool, error) {
	var keys []item
	collect := func(it item) {
		if getS(it, attrSK) != skState || getS(it, attrPK) != reqPrefix+id {
			keys = append(keys, key(getS(it, attrPK), getS(it, attrSK)))
		}
	}
	cur, err := s.read(ctx, id)
	if errors.Is(err, elicitation.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if cur.RetainUntil.After(now) {
		return false, nil
	}
	if err := s.query(ctx, auditPrefix+id, true, collect); err != nil {
		return false, err
	}
	if err := s.query(ctx, reqPrefix+id, true, collect); err != nil {
		return false, err
	}
	if err := s.deleteAll(ctx, keys); err != nil {
		return false, err
	}
	_, err = s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName: s.table, Key: stateKey(id),
		ConditionExpression:       aws.String("#retainUntil <= :now"),
		ExpressionAttributeNames:  names(attrRetainUntil),
		ExpressionAttributeValues: item{":now": num(now.UnixNano())},
	})
	if condFailed(err) {
		return false, nil
	}
	return err == nil, err
}

// deleteAll deletes keys with BatchWriteItem, 25 at a time, resending what
// DynamoDB leaves unprocessed (after a pause that grows, without end).
func (s *Store) deleteAll(ctx context.Context, keys []item) error {
	for chunk := range slices.Chunk(keys, 25) {
		reqs := make([]types.WriteRequest, len(chunk))
		for i, k := range chunk {
			reqs[i] = types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: k}}
		}
		pending := map[string][]types.WriteRequest{*s.table: reqs}
		for attempt := 1; len(pending) > 0; attempt++ {
			out, err := s.db.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: pending})
			if err != nil {
				return fmt.Errorf("delete items: %w", err)
			}
			if pending = out.UnprocessedItems; len(pending) > 0 {
				if err := s.again(ctx, min(attempt, conflictAttempts-1), conflictAttempts, nil); err != nil {
					return fmt.Errorf("delete items: %w", err)
				}
			}
		}
	}
	return nil
}
