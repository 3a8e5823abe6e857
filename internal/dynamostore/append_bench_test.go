package dynamostore_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/mcp-elicitation/elicitation/internal/dynamostore"
	"github.com/mcp-elicitation/elicitation/internal/dynamostore/dynamotest"
	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// BenchmarkAppend appends entries to one request's audit trail on DynamoDB
// Local: one writer after another, and 8 at once (each must chain to the
// head another may have just moved).
//
//	go test -run '^$' -bench Append -benchtime 200x ./internal/dynamostore/
func BenchmarkAppend(b *testing.B) {
	ctx := context.Background()
	for _, writers := range []int{1, 8} {
		b.Run(fmt.Sprint("writers=", writers), func(b *testing.B) {
			s, _, _ := dynamotest.Store(b, dynamostore.Options{})
			r := approval()
			mustCreate(b, s, r)
			b.ResetTimer()
			var wg sync.WaitGroup
			for w := range writers {
				wg.Go(func() {
					for i := w; i < b.N; i += writers {
						e := elicitation.AuditEntry{At: t0, Action: elicitation.ActionPushed, Principal: "alice", Detail: fmt.Sprint(i)}
						if err := s.Append(ctx, r.State.ID, e); err != nil {
							b.Error(err)
						}
					}
				})
			}
			wg.Wait()
		})
	}
}
