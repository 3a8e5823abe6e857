package clientreg

import (
	"context"
	"sync"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/grant"
)

// memStore is a grant.Store in memory, enough for these tests (until
// granttest.Memory is on main).
type memStore struct {
	mu   sync.Mutex
	now  func() time.Time
	recs map[[2]string]grant.Record
	err  error // when set, every call fails with it
}

var _ grant.Store = (*memStore)(nil)

func newMemStore(now func() time.Time) *memStore {
	return &memStore{now: now, recs: make(map[[2]string]grant.Record)}
}

func (s *memStore) Get(_ context.Context, kind, id string) (grant.Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return grant.Record{}, s.err
	}
	r, ok := s.recs[[2]string{kind, id}]
	if !ok || !s.now().Before(r.Expires) {
		return grant.Record{}, grant.ErrNotFound
	}
	return r, nil
}

func (s *memStore) Put(_ context.Context, r grant.Record) (grant.Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return grant.Record{}, s.err
	}
	old, ok := s.recs[[2]string{r.Kind, r.ID}]
	if ok && !s.now().Before(old.Expires) {
		ok = false
	}
	if (ok && old.Version != r.Version) || (!ok && r.Version != 0) {
		return grant.Record{}, grant.ErrConflict
	}
	r.Version++
	s.recs[[2]string{r.Kind, r.ID}] = r
	return r, nil
}

func (s *memStore) Delete(_ context.Context, kind, id string, version int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.recs[[2]string{kind, id}]
	switch {
	case !ok:
		return grant.ErrNotFound
	case r.Version != version:
		return grant.ErrConflict
	}
	delete(s.recs, [2]string{kind, id})
	return nil
}

func (s *memStore) records() []grant.Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []grant.Record
	for _, r := range s.recs {
		out = append(out, r)
	}
	return out
}
