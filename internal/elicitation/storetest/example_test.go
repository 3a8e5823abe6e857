package storetest_test

import (
	"path/filepath"
	"testing"

	"github.com/mcp-elicitation/elicitation/internal/boltstore"
	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/elicitation/storetest"
)

// A store joins the contract with one test: Run, given a Factory that
// opens a fresh, empty store and returns two handles on the same data (two
// opens of one file here; two clients of one table for DynamoDB), so that
// the suite checks what one handle writes against what the other reads,
// and races between them.
func ExampleRun() {
	_ = func(t *testing.T) { // func TestContract(t *testing.T) in the store's package
		storetest.Run(t, func(t *testing.T) (a, b elicitation.Store) {
			path := filepath.Join(t.TempDir(), "s.db")
			sa, err := boltstore.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			sb, err := boltstore.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = sa.Close(); _ = sb.Close() })
			return sa, sb
		})
	}
}
