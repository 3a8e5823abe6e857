package boltstore

import (
	"sync"

	bolt "go.etcd.io/bbolt"
)

// MaxBatch is the most writes one group commit carries in one bbolt
// transaction (and so under one fsync).
const MaxBatch = 1000

// groupCommit lands writes that arrive while another commit is under way
// together, in one transaction: bbolt runs one writer at a time and each
// commit is an fsync, so deciding many requests at once is bound by fsyncs,
// not by work. A write that finds no commit under way runs at once (no
// added delay, unlike bbolt's DB.Batch, which waits up to 10 ms for
// company). Every caller returns only after the transaction that holds its
// write committed, so "returned without error" still means "on disk".
//
// A batch's functions run one after another in one transaction. If any of
// them fails, or the commit does, nothing of the batch is kept and each of
// its writes is run again on its own, so each caller gets exactly the
// outcome of its own write: a failure never records a write of a caller
// that gets an error, nor fails a caller whose write was sound. A function
// may therefore run more than once and must reset what it captures at the
// start of each run.
type groupCommit struct {
	mu    sync.Mutex
	queue []*batchCall
	busy  bool
}

type batchCall struct {
	fn   func(*bolt.Tx) error
	done chan error
}

// do runs fn in a transaction of run (the store's guarded update), alone or
// with the writes that arrive meanwhile, and returns fn's outcome once that
// transaction committed or rolled back.
func (g *groupCommit) do(run func(func(*bolt.Tx) error) error, fn func(*bolt.Tx) error) error {
	c := &batchCall{fn: fn, done: make(chan error, 1)}
	g.mu.Lock()
	g.queue = append(g.queue, c)
	if g.busy {
		g.mu.Unlock()
		return <-c.done
	}
	g.busy = true
	g.mu.Unlock()
	if g.commitNext(run) {
		// Writes queued behind this one: land them without holding this
		// caller, whose write is already on disk.
		go func() {
			for g.commitNext(run) {
			}
		}()
	}
	return <-c.done
}

// commitNext commits the queue's next batch and reports whether more is
// queued (the caller then owns the next commit); otherwise it leaves the
// group idle.
func (g *groupCommit) commitNext(run func(func(*bolt.Tx) error) error) bool {
	g.mu.Lock()
	n := min(len(g.queue), MaxBatch)
	batch := g.queue[:n:n]
	g.queue = g.queue[n:]
	g.mu.Unlock()

	commitBatch(run, batch)

	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.queue) == 0 {
		g.queue = nil
		g.busy = false
		return false
	}
	return true
}

// commitBatch runs batch in one transaction, or each of its calls on its
// own when that transaction fails.
func commitBatch(run func(func(*bolt.Tx) error) error, batch []*batchCall) {
	if len(batch) == 1 {
		batch[0].done <- run(batch[0].fn)
		return
	}
	err := run(func(tx *bolt.Tx) error {
		for _, c := range batch {
			if err := c.fn(tx); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		for _, c := range batch {
			c.done <- nil
		}
		return
	}
	for _, c := range batch {
		c.done <- run(c.fn)
	}
}
