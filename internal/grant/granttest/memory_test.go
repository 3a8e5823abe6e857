package granttest_test

import (
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/grant"
	"github.com/mcp-elicitation/elicitation/internal/grant/granttest"
)

// TestMemoryContract runs the contract on the fake: both handles are the
// one Memory.
func TestMemoryContract(t *testing.T) {
	t.Parallel()
	granttest.Run(t, func(t *testing.T, now func() time.Time) (a, b grant.Store) {
		m := &granttest.Memory{Now: now}
		return m, m
	})
}
