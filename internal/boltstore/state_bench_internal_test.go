package boltstore

import (
	"context"
	"path/filepath"
	"testing"
)

// BenchmarkState is the store's part of an elicit_status call: one read
// transaction and the decode of the request's state, with encoding/json
// (before) and with the scanner (now), in one run:
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
	for _, mode := range []string{"encoding-json", "scanner"} {
		b.Run(mode, func(b *testing.B) {
			stateByEncodingJSON = mode == "encoding-json"
			defer func() { stateByEncodingJSON = false }()
			b.ReportAllocs()
			for i := range b.N {
				if _, err := s.State(ctx, ids[i%len(ids)]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
