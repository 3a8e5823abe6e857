package dynamostore_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/mcp-elicitation/elicitation/internal/dynamostore"
	"github.com/mcp-elicitation/elicitation/internal/dynamostore/dynamotest"
	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// An id longer than any DynamoDB key can be names no request: every read
// says ErrNotFound (so that an agent or a reviewer gets not_found), not a
// DynamoDB validation error (an internal error).
func TestIDTooLongForAKey(t *testing.T) {
	t.Parallel()
	s, _, _ := dynamotest.Store(t, dynamostore.Options{})
	ctx := context.Background()
	id := strings.Repeat("a", 3000)
	e := elicitation.AuditEntry{At: t0, Action: elicitation.ActionRendered, Principal: elicitation.Reviewer}
	_, errState := s.State(ctx, id)
	_, errLoad := s.Load(ctx, id)
	_, errAudit := s.Audit(ctx, id)
	errAppend := s.Append(ctx, id, e)
	_, errResolve := s.Resolve(ctx, id, elicitation.Resolution{Status: elicitation.StatusCanceled, At: t0, By: "x"})
	_, errConsume := s.Consume(ctx, id, elicitation.AuditEntry{At: t0, Action: elicitation.ActionResultFetched, Principal: "x"})
	_, errWait := wait(ctx, s, id)
	for name, err := range map[string]error{"State": errState, "Load": errLoad, "Audit": errAudit, "Append": errAppend, "Resolve": errResolve, "Consume": errConsume, "Wait": errWait} {
		if !errors.Is(err, elicitation.ErrNotFound) {
			t.Errorf("%s of a %d-byte id: %v, want ErrNotFound", name, len(id), err)
		}
	}
}
