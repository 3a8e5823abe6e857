package dynamostore_test

import (
	"testing"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/elicitation/storetest"
)

// TestContract runs the store contract suite, unchanged, on DynamoDB Local:
// each test gets a fresh table and two Stores with their own clients on it.
func TestContract(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) (a, b elicitation.Store) {
		return twoHandles(t)
	})
}
