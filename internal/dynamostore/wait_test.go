package dynamostore_test

import (
	"context"
	"fmt"

	"github.com/mcp-elicitation/elicitation/internal/dynamostore"
	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// wait is what a Service's wait does on the store, bounded by ctx alone:
// it reads the state, registers a Watch (the store's one polling loop)
// and reads again at each wake, until the request is no longer pending. A
// failed read ends it with that error (the Watch wakes it when its polls
// have been failing for the tolerance); ctx's end with the state last read
// and ctx's error.
func wait(ctx context.Context, s *dynamostore.Store, id string) (elicitation.State, error) {
	st, err := s.State(ctx, id)
	if err != nil || st.Status != elicitation.StatusPending {
		return st, waitErr(ctx, id, err)
	}
	woken := make(chan struct{}, 1)
	defer s.Watch(id, nil, func() {
		select {
		case woken <- struct{}{}:
		default:
		}
	})()
	// Read only when woken: a change between the first read and the
	// Watch is the Watch's first poll's to see, and a test that counts
	// the waiter's reads (TestServerRestartMidFlow: the first read, then
	// a poll) knows that every read after them is a poll, which an
	// outage does not end.
	for {
		select {
		case <-woken:
		case <-ctx.Done():
			return st, waitErr(ctx, id, ctx.Err())
		}
		st, err = s.State(ctx, id)
		if err != nil || st.Status != elicitation.StatusPending {
			return st, waitErr(ctx, id, err)
		}
	}
}

func waitErr(ctx context.Context, id string, err error) error {
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return fmt.Errorf("wait %s: %w", id, ctx.Err())
	}
	return fmt.Errorf("wait %s: %w", id, err)
}
