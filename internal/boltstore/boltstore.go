// Package boltstore is the embedded elicitation.Store: one bbolt file,
// durable across restarts, for running the service on a laptop as one
// binary. Waiters are woken in-process the moment a resolution commits.
//
// bbolt locks its file for one process at a time, so every handle opened
// on the same path in this process shares one database (and one set of
// waiters); a second process gets a clear "in use" error. To share
// requests between processes, use the DynamoDB store.
package boltstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

var (
	bucketState   = []byte("state")
	bucketPayload = []byte("payload")
	bucketAnswer  = []byte("answer")
	bucketAudit   = []byte("audit")  // one sub-bucket per request: seq -> entry
	bucketCounts  = []byte("counts") // id \x00 action -> how many were appended
	bucketRetain  = []byte("retain") // retainUntil (8 bytes) + id -> nothing
	bucketOutbox  = []byte("outbox") // dueAt (8 bytes) + delivery id -> delivery
	bucketMarks   = []byte("marks")  // one sub-bucket per request: MarkKey(mark) -> nothing (AppendOnce)
)

// Store is a handle on an embedded store.
type Store struct {
	db     *shared
	closed sync.Once
}

var _ elicitation.Store = (*Store)(nil)

type shared struct {
	path string
	bolt *bolt.DB
	refs int // guarded by registryMu

	// wakes are the watches of this process (Watch), woken the
	// moment a resolution commits.
	wakes elicitation.Wakes

	// broken is set when a write found the file damaged: bbolt may then
	// still hold its writer lock (its rollback read the damaged pages too),
	// so later writes fail at once instead of waiting for it forever.
	broken atomic.Pointer[error]

	// group lands decisions that arrive together in one transaction.
	group groupCommit
}

var (
	registryMu sync.Mutex
	registry   = map[string]*shared{}
)

// Open opens (creating if needed) the store in the file at path. Handles
// on the same path share one database; close each with Close.
func Open(path string) (*Store, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	registryMu.Lock()
	defer registryMu.Unlock()
	if sh, ok := registry[abs]; ok {
		sh.refs++
		return &Store{db: sh}, nil
	}
	db, err := openChecked(abs)
	if err != nil {
		return nil, err
	}
	sh := &shared{path: abs, bolt: db, refs: 1}
	registry[abs] = sh
	return &Store{db: sh}, nil
}

// openChecked opens the bbolt file at abs after checking that it is whole
// (bbolt would fault on a truncated file) and that the pages every call
// depends on are sound (checkTrees: constant time and memory, whatever the
// store's size; Check is the full check of every page), and creates the
// buckets.
func openChecked(abs string) (*bolt.DB, error) {
	what, err := checkFile(abs)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", abs, err)
	}
	if what != "" {
		return nil, damaged(abs, what)
	}
	var db *bolt.DB
	err = guard("open store "+abs, func() error {
		var err error
		db, err = bolt.Open(abs, 0o600, &bolt.Options{Timeout: openTimeout})
		return err
	})
	var fault *faultError
	switch {
	case errors.As(err, &fault):
		return nil, damaged(abs, "its pages are damaged ("+fault.reason+")")
	case errors.Is(err, bolterrors.ErrTimeout):
		return nil, fmt.Errorf("open store %s: the file is in use by another process (the embedded store serves one process; use the DynamoDB store to share requests)", abs)
	case errors.Is(err, bolterrors.ErrInvalid), errors.Is(err, bolterrors.ErrChecksum), errors.Is(err, bolterrors.ErrVersionMismatch):
		return nil, damaged(abs, "bbolt cannot read it ("+err.Error()+")")
	case err != nil:
		return nil, fmt.Errorf("open store %s: %w", abs, err)
	}
	problem, err := checkTrees(abs, db)
	var treeFault *faultError
	switch {
	case errors.As(err, &treeFault):
		problem = treeFault.reason
	case err != nil:
		_ = db.Close()
		return nil, fmt.Errorf("open store %s: %w", abs, err)
	}
	if problem != "" {
		_ = db.Close()
		return nil, damaged(abs, "its pages are damaged ("+problem+")")
	}
	err = guard("open store "+abs, func() error {
		return db.Update(func(tx *bolt.Tx) error {
			for _, b := range [][]byte{bucketState, bucketPayload, bucketAnswer, bucketAudit, bucketCounts, bucketRetain, bucketOutbox, bucketMarks, bucketGrants, bucketGrantDue} {
				if _, err := tx.CreateBucketIfNotExists(b); err != nil {
					return err
				}
			}
			return ensureIndexes(tx)
		})
	})
	if err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("open store %s: create buckets: %w", abs, err)
	}
	return db, nil
}

// ensureIndexes creates the indexes a file written before them lacks,
// each filled from what it indexes: the inbox's, the owners' and the
// owners' pending index from the stored states, the outbox's due index
// from the outbox.
func ensureIndexes(tx *bolt.Tx) error {
	// Each runs even if one before failed; the transaction then rolls back.
	return errors.Join(
		ensureIndex(tx, bucketPending, bucketState, func(st elicitation.State) error {
			var p elicitation.Payload
			if st.Status != elicitation.StatusPending {
				return nil
			} else if _, err := getJSON(tx, bucketPayload, st.ID, &p); err != nil {
				return err
			}
			return putPending(tx, elicitation.InboxEntryOf(elicitation.Request{State: st, Payload: p}))
		}),
		ensureIndex(tx, bucketOwned, bucketState, func(st elicitation.State) error { return putOwned(tx, st) }),
		ensureIndex(tx, bucketOwnerPending, bucketState, func(st elicitation.State) error {
			if st.Status != elicitation.StatusPending {
				return nil
			}
			return tx.Bucket(bucketOwnerPending).Put(ownerPendingKey(st), nil)
		}),
		ensureIndex(tx, bucketOutboxDue, bucketOutbox, func(d elicitation.Delivery) error {
			return tx.Bucket(bucketOutboxDue).Put(dueKey(d), outboxKey(d))
		}),
	)
}

// ensureIndex creates the bucket index, unless it exists, and calls put
// with every value of the bucket from, decoded from JSON.
func ensureIndex[T any](tx *bolt.Tx, index, from []byte, put func(T) error) error {
	if tx.Bucket(index) != nil {
		return nil
	}
	if _, err := tx.CreateBucket(index); err != nil {
		return err
	}
	return eachJSON(tx.Bucket(from), put)
}

// eachJSON calls fn with every value of the bucket b (none if b is nil),
// decoded from JSON.
func eachJSON[T any](b *bolt.Bucket, fn func(T) error) error {
	if b == nil {
		return nil
	}
	return b.ForEach(func(k, v []byte) error {
		var x T
		if err := json.Unmarshal(v, &x); err != nil {
			return fmt.Errorf("decode %T %q: %w", x, k, err)
		}
		return fn(x)
	})
}

// Close releases the handle; the file is closed with the last handle.
func (s *Store) Close() error {
	var err error
	s.closed.Do(func() {
		registryMu.Lock()
		defer registryMu.Unlock()
		s.db.refs--
		if s.db.refs == 0 {
			delete(registry, s.db.path)
			err = s.db.close()
		}
	})
	return err
}

// close closes the bbolt file. After a write found the file damaged, bbolt
// may hold its writer lock for good and its Close would wait for it: the
// close is then given a moment and abandoned (the process's exit releases
// the file).
func (sh *shared) close() error {
	broken := sh.broken.Load()
	if broken == nil {
		return sh.bolt.Close()
	}
	done := make(chan error, 1)
	go func() { done <- sh.bolt.Close() }()
	select {
	case err := <-done:
		return err
	case <-time.After(time.Second):
		return fmt.Errorf("close store %s: %w", sh.path, *broken)
	}
}

func notFound(op, id string) error { return fmt.Errorf("%s %s: %w", op, id, elicitation.ErrNotFound) }

func getJSON(tx *bolt.Tx, bucket []byte, id string, v any) (bool, error) {
	b := tx.Bucket(bucket).Get([]byte(id))
	if b == nil {
		return false, nil
	}
	if err := json.Unmarshal(b, v); err != nil {
		return false, fmt.Errorf("decode %s of %s: %w", bucket, id, err)
	}
	return true, nil
}

// getState reads and decodes the state of id; ok is false when there is none.
func getState(tx *bolt.Tx, id string, st *elicitation.State) (bool, error) {
	*st = elicitation.State{}
	return getJSON(tx, bucketState, id, st)
}

func putJSON(tx *bolt.Tx, bucket []byte, id string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %s of %s: %w", bucket, id, err)
	}
	return tx.Bucket(bucket).Put([]byte(id), b)
}

func retainKey(st elicitation.State) []byte {
	k := binary.BigEndian.AppendUint64(nil, uint64(st.RetainUntil.UnixNano()))
	return append(k, st.ID...)
}

// Create implements elicitation.Store.
func (s *Store) Create(ctx context.Context, r elicitation.Request, created elicitation.AuditEntry) error {
	id := r.State.ID
	return s.update(ctx, "create "+id, func(tx *bolt.Tx) error {
		if tx.Bucket(bucketState).Get([]byte(id)) != nil {
			return fmt.Errorf("create %s: %w", id, elicitation.ErrConflict)
		}
		if err := admitPending(tx, r); err != nil {
			return err
		}
		if err := putJSON(tx, bucketState, id, r.State); err != nil {
			return err
		}
		if err := putJSON(tx, bucketPayload, id, r.Payload); err != nil {
			return err
		}
		if err := tx.Bucket(bucketRetain).Put(retainKey(r.State), nil); err != nil {
			return err
		}
		if err := putDeliveries(tx, r.Outbox); err != nil {
			return err
		}
		if err := putPending(tx, elicitation.InboxEntryOf(r)); err != nil {
			return err
		}
		if err := putOwned(tx, r.State); err != nil {
			return err
		}
		return appendAudit(tx, id, created)
	})
}

// State implements elicitation.Store.
func (s *Store) State(ctx context.Context, id string) (elicitation.State, error) {
	var st elicitation.State
	err := s.view(ctx, func(tx *bolt.Tx) error {
		ok, err := getState(tx, id, &st)
		if err == nil && !ok {
			err = notFound("state", id)
		}
		return err
	})
	return st, err
}

// Load implements elicitation.Store.
func (s *Store) Load(ctx context.Context, id string) (elicitation.Record, error) {
	var rec elicitation.Record
	err := s.view(ctx, func(tx *bolt.Tx) error {
		ok, err := getState(tx, id, &rec.State)
		if err != nil {
			return err
		}
		if !ok {
			return notFound("load", id)
		}
		if _, err := getJSON(tx, bucketPayload, id, &rec.Payload); err != nil {
			return err
		}
		var a elicitation.Answer
		ok, err = getJSON(tx, bucketAnswer, id, &a)
		if ok {
			rec.Answer = &a
		}
		return err
	})
	return rec, err
}

// Resolve implements elicitation.Store. Decisions that arrive together
// land in one transaction (groupCommit); each returns only once its
// transaction committed.
func (s *Store) Resolve(ctx context.Context, id string, t elicitation.Resolution) (elicitation.State, error) {
	var (
		st      elicitation.State
		decided bool
		refusal error // why t was refused; a refusal writes nothing
	)
	err := s.updateBatched(ctx, "resolve "+id, func(tx *bolt.Tx) error {
		// A batch may run this more than once: start afresh each time.
		var err error
		st, decided, refusal, err = resolveTx(tx, id, t)
		// A refusal returns nil so that the batch's other decisions land.
		return err
	})
	if err == nil {
		err = refusal
	}
	if err == nil && decided {
		s.db.wakes.Wake(id)
	}
	return st, err
}

// resolveTx lands t on id's request in tx and returns the request's state
// after it and whether t decided it. A refusal (not found, or a resolution
// that conflicts with the one decided) writes nothing and comes back as
// refusal, with the stored state; err is a failed read or write, after
// which tx must not commit.
func resolveTx(tx *bolt.Tx, id string, t elicitation.Resolution) (st elicitation.State, decided bool, refusal, err error) {
	ok, err := getState(tx, id, &st)
	switch {
	case err != nil:
		return st, false, nil, err
	case !ok:
		return st, false, notFound("resolve", id), nil
	}
	if done, err := t.Check(st); done {
		if err != nil {
			return st, false, fmt.Errorf("resolve %s: %w", id, err), nil
		}
		return st, false, nil, nil // a retry of what was decided
	}
	step := t.Step(st)
	if err := writeStep(tx, id, step); err != nil {
		return st, false, nil, err
	}
	return step.Next, step.Decides(), nil, nil
}

// writeStep writes what a resolution's step lands: the next state, the
// answer, the audit entry and the outbox's changes.
func writeStep(tx *bolt.Tx, id string, step elicitation.Step) error {
	if err := putJSON(tx, bucketState, id, step.Next); err != nil {
		return err
	}
	if err := stepPending(tx, step.Next); err != nil {
		return err
	}
	if step.Answer != nil {
		if err := putJSON(tx, bucketAnswer, id, step.Answer); err != nil {
			return err
		}
	}
	if err := appendAudit(tx, id, step.Entry); err != nil {
		return err
	}
	if err := putDeliveries(tx, step.Outbox); err != nil {
		return err
	}
	for _, d := range step.Withdraw {
		if err := deleteDelivery(tx, d); err != nil {
			return err
		}
	}
	return nil
}

// Consume implements elicitation.Store.
func (s *Store) Consume(ctx context.Context, id string, entry elicitation.AuditEntry) (elicitation.State, error) {
	var st elicitation.State
	err := s.update(ctx, "consume "+id, func(tx *bolt.Tx) error {
		ok, err := getState(tx, id, &st)
		switch {
		case err != nil:
			return err
		case !ok:
			return notFound("consume", id)
		}
		switch st.Status {
		case elicitation.StatusSubmitted, elicitation.StatusDeclined:
			st.Status = elicitation.StatusConsumed
			st.ConsumedAt = entry.At
			if err := putJSON(tx, bucketState, id, st); err != nil {
				return err
			}
		case elicitation.StatusConsumed:
		default:
			return fmt.Errorf("consume %s: %w", id, elicitation.ErrConflict)
		}
		return appendAudit(tx, id, entry)
	})
	return st, err
}

// Append implements elicitation.Store.
func (s *Store) Append(ctx context.Context, id string, entry elicitation.AuditEntry) error {
	return s.update(ctx, "append audit "+id, func(tx *bolt.Tx) error {
		if tx.Bucket(bucketState).Get([]byte(id)) == nil {
			return notFound("append audit", id)
		}
		return appendAudit(tx, id, entry)
	})
}

// AppendOnce implements elicitation.Store: the mark and the entry are
// written in one transaction, and bbolt runs one writer at a time.
func (s *Store) AppendOnce(ctx context.Context, id, mark string, entry elicitation.AuditEntry) (bool, error) {
	if mark == "" {
		return false, fmt.Errorf("append once %s: empty mark", id)
	}
	first := false
	err := s.update(ctx, "append once "+id, func(tx *bolt.Tx) error {
		first = false
		if tx.Bucket(bucketState).Get([]byte(id)) == nil {
			return notFound("append once", id)
		}
		marks, err := tx.Bucket(bucketMarks).CreateBucketIfNotExists([]byte(id))
		if err != nil {
			return err
		}
		k := []byte(elicitation.MarkKey(mark))
		if marks.Get(k) != nil {
			return nil
		}
		if err := marks.Put(k, nil); err != nil {
			return err
		}
		first = true
		return putAudit(tx, id, entry)
	})
	return first && err == nil, err
}

func countKey(id string, a elicitation.Action) []byte {
	return append(append([]byte(id), 0), a...)
}

func appendAudit(tx *bolt.Tx, id string, e elicitation.AuditEntry) error {
	if e.Action.Bounded() {
		counts := tx.Bucket(bucketCounts)
		k := countKey(id, e.Action)
		var n uint64
		if v := counts.Get(k); len(v) == 8 {
			n = binary.BigEndian.Uint64(v)
		}
		n++
		if err := counts.Put(k, binary.BigEndian.AppendUint64(nil, n)); err != nil {
			return err
		}
		if n > elicitation.AuditCap {
			return nil
		}
	}
	return putAudit(tx, id, e)
}

// putAudit stores e at the end of id's trail, uncounted, chained to the
// trail's last entry (bbolt runs one writer at a time, so the chain cannot
// fork).
func putAudit(tx *bolt.Tx, id string, e elicitation.AuditEntry) error {
	b, err := tx.Bucket(bucketAudit).CreateBucketIfNotExists([]byte(id))
	if err != nil {
		return err
	}
	var last elicitation.AuditEntry
	if _, v := b.Cursor().Last(); v != nil {
		if err := json.Unmarshal(v, &last); err != nil {
			return fmt.Errorf("decode the last audit entry of %s: %w", id, err)
		}
	}
	e = elicitation.ChainEntry(id, last.Head(), e)
	seq, err := b.NextSequence()
	if err != nil {
		return err
	}
	v, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("encode audit entry: %w", err)
	}
	return b.Put(binary.BigEndian.AppendUint64(nil, seq), v)
}

// Audit implements elicitation.Store.
func (s *Store) Audit(ctx context.Context, id string) (elicitation.AuditTrail, error) {
	var tr elicitation.AuditTrail
	err := s.view(ctx, func(tx *bolt.Tx) error {
		if tx.Bucket(bucketState).Get([]byte(id)) == nil {
			return notFound("audit", id)
		}
		if b := tx.Bucket(bucketAudit).Bucket([]byte(id)); b != nil {
			err := b.ForEach(func(_, v []byte) error {
				var e elicitation.AuditEntry
				if err := json.Unmarshal(v, &e); err != nil {
					return fmt.Errorf("decode audit entry of %s: %w", id, err)
				}
				tr.Entries = append(tr.Entries, e)
				return nil
			})
			if err != nil {
				return err
			}
		}
		for _, a := range elicitation.BoundedActions {
			if v := tx.Bucket(bucketCounts).Get(countKey(id, a)); len(v) == 8 {
				tr.Omit(a, int(binary.BigEndian.Uint64(v))-elicitation.AuditCap)
			}
		}
		return nil
	})
	elicitation.SortUnchained(tr.Entries)
	return tr, err
}

// Watch implements elicitation.Store: every handle on the file in this
// process shares one registry, which a resolution wakes once it commits
// (every write is through a handle in this process: bbolt locks the file,
// so there is nothing to poll and every is not asked).
func (s *Store) Watch(id string, _ func() time.Duration, wake func()) (stop func()) {
	return s.db.wakes.Watch(id, wake)
}

// CleanupBatch is how many requests Cleanup removes per write transaction:
// bbolt serialises writers, so a long transaction would hold up every
// create and decision behind it (and keep every freed page in memory).
const CleanupBatch = 500

// CleanupRound is how many due requests Cleanup collects at a time (their
// retention keys, about 40 bytes each) before it removes them.
const CleanupRound = 50_000

// afterCleanupBatch, if set (by tests), runs after each committed full batch.
var afterCleanupBatch func()

// Cleanup implements elicitation.Store. It removes what is due in batches
// of CleanupBatch, each its own transaction, so other writes go between
// them; it stops early, with what it removed so far, when ctx ends.
//
// Requests are keyed by random ids, so requests due together are spread
// over every page of the request buckets: removing them in the order of
// their retention rewrote most of those pages in every batch (a cleanup of
// 100,000 wrote about 9.5 times the file). Cleanup therefore collects up to
// CleanupRound due requests, removes them in the order of their ids, so
// that each batch empties neighbouring pages and each page is written about
// once, and then removes their retention keys, which are neighbours in the
// retention index, in the same order as they lie there. A request is
// removed whole in one transaction; a retention key left by a cleanup that
// stopped between the two steps names nothing and goes with the next one.
func (s *Store) Cleanup(ctx context.Context, now time.Time) (int, error) {
	total := 0
	for {
		keys, err := s.dueKeys(ctx, bucketRetain, now, CleanupRound)
		if err != nil || len(keys) == 0 {
			return total, s.finishCleanup(ctx, now, err)
		}
		n, err := s.removeRound(ctx, keys)
		total += n
		if err != nil || len(keys) < CleanupRound {
			return total, s.finishCleanup(ctx, now, err)
		}
	}
}

// finishCleanup removes the inbox index's expired entries, the outbox's
// leftovers and the expired grants after a cleanup that ended without err.
func (s *Store) finishCleanup(ctx context.Context, now time.Time, err error) error {
	if err != nil {
		return err
	}
	err = s.update(ctx, "cleanup outbox", func(tx *bolt.Tx) error {
		if err := cleanupPending(tx, now); err != nil {
			return err
		}
		return cleanupOutbox(tx, now)
	})
	if err != nil {
		return err
	}
	return s.cleanupGrants(ctx, now)
}

// dueKeys returns up to limit keys of the index bucket (keys that start
// with a time, 8 bytes) due at now, in their order.
func (s *Store) dueKeys(ctx context.Context, bucket []byte, now time.Time, limit int) ([][]byte, error) {
	var keys [][]byte
	err := s.view(ctx, func(tx *bolt.Tx) error {
		keys = nil
		end := binary.BigEndian.AppendUint64(nil, uint64(now.UnixNano()))
		c := tx.Bucket(bucket).Cursor()
		for k, _ := c.First(); k != nil && len(keys) < limit && bytes.Compare(k[:8], end) <= 0; k, _ = c.Next() {
			keys = append(keys, bytes.Clone(k))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("cleanup: %w", err)
	}
	return keys, nil
}

// removeRound removes the requests of the retention keys (in retention
// order), in batches in the order of their ids, then the keys.
func (s *Store) removeRound(ctx context.Context, keys [][]byte) (int, error) {
	byID := slices.Clone(keys)
	slices.SortFunc(byID, func(a, b []byte) int { return bytes.Compare(a[8:], b[8:]) })
	total := 0
	for batch := range slices.Chunk(byID, CleanupBatch) {
		n := 0
		err := s.update(ctx, "cleanup", func(tx *bolt.Tx) error {
			n = 0
			for _, k := range batch {
				if tx.Bucket(bucketState).Get(k[8:]) != nil {
					n++
				}
				if err := removeRequestData(tx, k[8:]); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return total, err
		}
		total += n
		if len(batch) == CleanupBatch && afterCleanupBatch != nil {
			afterCleanupBatch()
		}
	}
	// Retention keys are small: ten batches' worth per transaction.
	for batch := range slices.Chunk(keys, 10*CleanupBatch) {
		err := s.update(ctx, "cleanup", func(tx *bolt.Tx) error {
			for _, k := range batch {
				if err := tx.Bucket(bucketRetain).Delete(k); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

// removeRequestData deletes request id, its audit trail, counters and
// marks (not its retention key); a request already gone is no error.
func removeRequestData(tx *bolt.Tx, id []byte) error {
	if err := removeOwned(tx, id); err != nil {
		return err
	}
	for _, b := range [][]byte{bucketState, bucketPayload, bucketAnswer} {
		if err := tx.Bucket(b).Delete(id); err != nil {
			return err
		}
	}
	for _, b := range [][]byte{bucketAudit, bucketMarks} {
		if tx.Bucket(b).Bucket(id) != nil {
			if err := tx.Bucket(b).DeleteBucket(id); err != nil {
				return err
			}
		}
	}
	for _, a := range elicitation.BoundedActions {
		if err := tx.Bucket(bucketCounts).Delete(countKey(string(id), a)); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) view(ctx context.Context, fn func(*bolt.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return guard("read store", func() error { return s.db.bolt.View(fn) })
}

func (s *Store) update(ctx context.Context, op string, fn func(*bolt.Tx) error) error {
	if err := s.writable(ctx, op); err != nil {
		return err
	}
	return wrapWrite(op, s.db.commit(op, fn))
}

// updateBatched is update for writes that may share a transaction with
// others arriving at the same time (groupCommit): fn may run more than once
// and must reset what it captures at the start of each run.
func (s *Store) updateBatched(ctx context.Context, op string, fn func(*bolt.Tx) error) error {
	if err := s.writable(ctx, op); err != nil {
		return err
	}
	run := func(f func(*bolt.Tx) error) error { return s.db.commit("write", f) }
	return wrapWrite(op, s.db.group.do(run, fn))
}

// writable refuses a write before it starts: its context ended, or an
// earlier write found the file damaged.
func (s *Store) writable(ctx context.Context, op string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if broken := s.db.broken.Load(); broken != nil {
		return fmt.Errorf("%s: %w", op, *broken)
	}
	return nil
}

// commit runs fn in one guarded, committed (fsync'd) bbolt transaction and
// remembers when it found the file damaged.
func (sh *shared) commit(op string, fn func(*bolt.Tx) error) error {
	err := guard(op, func() error { return sh.bolt.Update(fn) })
	if errors.Is(err, ErrDamaged) {
		sh.broken.CompareAndSwap(nil, &err)
	}
	return err
}

// wrapWrite says which write failed, except for the domain's own errors.
func wrapWrite(op string, err error) error {
	if err == nil || errors.Is(err, elicitation.ErrNotFound) || elicitation.CodeOf(err) != elicitation.CodeInternal {
		return err
	}
	return fmt.Errorf("%s: %w", op, err)
}

// EachRequest implements elicitation.RequestLister. The ids are read in
// one transaction, and fn called after it, so that fn may use the store.
func (s *Store) EachRequest(ctx context.Context, fn func(id string) error) error {
	var ids []string
	err := s.view(ctx, func(tx *bolt.Tx) error {
		return tx.Bucket(bucketState).ForEach(func(k, _ []byte) error {
			ids = append(ids, string(k))
			return nil
		})
	})
	if err != nil {
		return err
	}
	for _, id := range ids {
		if err := fn(id); err != nil {
			return err
		}
	}
	return nil
}
