package boltstore

import (
	"context"
	"path/filepath"
	"testing"
)

// BenchmarkState is the store's part of an elicit_status call: one read
// transaction and the decode of the request's state (encoding/json):
//
//	go test ./internal/boltstore -run '^$' -bench 'State$' -benchmem
func BenchmarkState(b *testing.B) {
	s, err := Open(filepath.Join(b.TempDir(), "elicitation.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ids := fill(b, s, 1000)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if _, err := s.State(ctx, ids[i%len(ids)]); err != nil {
			b.Fatal(err)
		}
	}
}
