package clientreg

import (
	"context"
	"sync"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/grant"
	"github.com/mcp-elicitation/elicitation/internal/grant/granttest"
)

// memStore is granttest.Memory that fails every call with err when set
// and lists what it holds.
type memStore struct {
	granttest.Memory
	err error

	mu   sync.Mutex
	keys map[[2]string]bool
}

var _ grant.Store = (*memStore)(nil)

func newMemStore(now func() time.Time) *memStore {
	return &memStore{Memory: granttest.Memory{Now: now}}
}

func (s *memStore) Get(ctx context.Context, kind, id string) (grant.Record, error) {
	if s.err != nil {
		return grant.Record{}, s.err
	}
	return s.Memory.Get(ctx, kind, id)
}

func (s *memStore) Put(ctx context.Context, r grant.Record) (grant.Record, error) {
	if s.err != nil {
		return grant.Record{}, s.err
	}
	out, err := s.Memory.Put(ctx, r)
	if err == nil {
		s.mu.Lock()
		if s.keys == nil {
			s.keys = map[[2]string]bool{}
		}
		s.keys[[2]string{r.Kind, r.ID}] = true
		s.mu.Unlock()
	}
	return out, err
}

// records are the live records written so far.
func (s *memStore) records() []grant.Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []grant.Record
	for k := range s.keys {
		if r, err := s.Memory.Get(context.Background(), k[0], k[1]); err == nil {
			out = append(out, r)
		}
	}
	return out
}

func (s *memStore) Delete(ctx context.Context, kind, id string, version int64) error {
	if s.err != nil {
		return s.err
	}
	return s.Memory.Delete(ctx, kind, id, version)
}
