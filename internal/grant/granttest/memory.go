package granttest

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/grant"
)

// Memory is a grant.Store in memory, for other packages' tests: it passes
// the contract suite (Run). The zero value is ready to use and judges
// expiry by time.Now; set Now before first use to judge it by a test clock.
// Expired records are dropped when a write meets them.
type Memory struct {
	// Now is the clock expiry is judged by; nil means time.Now.
	Now func() time.Time

	mu sync.Mutex
	m  map[memKey]grant.Record
}

type memKey struct{ kind, id string }

var _ grant.Store = (*Memory)(nil)

func (m *Memory) now() time.Time {
	if m.Now == nil {
		return time.Now()
	}
	return m.Now()
}

// live returns the live record of k; it deletes an expired one. m.mu is held.
func (m *Memory) live(k memKey) (grant.Record, bool) {
	r, ok := m.m[k]
	if ok && !m.now().Before(r.Expires) {
		delete(m.m, k)
		return grant.Record{}, false
	}
	return r, ok
}

// Get implements grant.Store.
func (m *Memory) Get(ctx context.Context, kind, id string) (grant.Record, error) {
	if err := start(ctx, kind, id); err != nil {
		return grant.Record{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.live(memKey{kind, id})
	if !ok {
		return grant.Record{}, fmt.Errorf("get %s: %w", kind, grant.ErrNotFound)
	}
	r.Data = bytes.Clone(r.Data)
	return r, nil
}

// Put implements grant.Store.
func (m *Memory) Put(ctx context.Context, r grant.Record) (grant.Record, error) {
	if err := ctx.Err(); err != nil {
		return grant.Record{}, err
	}
	if err := grant.Check(r); err != nil {
		return grant.Record{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	k := memKey{r.Kind, r.ID}
	if cur, _ := m.live(k); cur.Version != r.Version {
		return grant.Record{}, fmt.Errorf("put %s: %w", r.Kind, grant.ErrConflict)
	}
	r.Version = grant.NewVersion()
	if m.m == nil {
		m.m = map[memKey]grant.Record{}
	}
	stored := r
	stored.Data = bytes.Clone(r.Data)
	stored.Expires = r.Expires.UTC()
	m.m[k] = stored
	return r, nil
}

// Delete implements grant.Store.
func (m *Memory) Delete(ctx context.Context, kind, id string, version int64) error {
	if err := start(ctx, kind, id); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	k := memKey{kind, id}
	cur, ok := m.live(k)
	switch {
	case !ok:
		return fmt.Errorf("delete %s: %w", kind, grant.ErrNotFound)
	case cur.Version != version:
		return fmt.Errorf("delete %s: %w", kind, grant.ErrConflict)
	}
	delete(m.m, k)
	return nil
}

// start refuses a call whose context ended or whose key no record can have.
func start(ctx context.Context, kind, id string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return grant.CheckKey(kind, id)
}
