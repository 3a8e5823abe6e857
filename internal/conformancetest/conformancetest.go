// Package conformancetest runs the official MCP conformance suite
// (npm @modelcontextprotocol/conformance, on Node 22) against a server
// from a Go test, scenario by scenario, and fails on any check that is not
// a success unless the scenario lists it as known, with the reason
// (docs/protocol.md "Conformance" explains each).
package conformancetest

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/testenv"
)

// Scenario is one server scenario of the suite and the checks that may end
// other than SUCCESS, by check id, with why.
type Scenario struct {
	Name  string
	Known map[string]string
}

// Check is one check of the suite's checks.json.
type Check struct {
	ID           string `json:"id"`
	Status       string `json:"status"`
	Description  string `json:"description"`
	ErrorMessage string `json:"errorMessage"`
}

// Run runs each scenario against the MCP endpoint url.
func Run(t *testing.T, url string, scenarios []Scenario) {
	t.Helper()
	node := testenv.Node22(t)
	suite := testenv.NodeModule(t, "@modelcontextprotocol/conformance/dist/index.js")
	for _, sc := range scenarios {
		t.Run(sc.Name, func(t *testing.T) {
			out := t.TempDir()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, node, suite, "server", "--url", url, "--scenario", sc.Name, "-o", out)
			log, _ := cmd.CombinedOutput() // it exits non-zero on failures: the checks decide
			checks := read(t, out)
			if len(checks) == 0 {
				t.Fatalf("the suite recorded no checks:\n%s", log)
			}
			seen := map[string]bool{}
			for _, c := range checks {
				switch c.Status {
				case "SUCCESS", "INFO":
					continue
				}
				seen[c.ID] = true
				if why, ok := sc.Known[c.ID]; ok {
					t.Logf("known %s %s (%s): %s", c.Status, c.ID, why, c.ErrorMessage)
					continue
				}
				t.Errorf("%s %s: %s: %s", c.Status, c.ID, c.Description, c.ErrorMessage)
			}
			for id := range sc.Known {
				if !seen[id] {
					t.Errorf("known check %s now passes: drop it from the list (and docs/protocol.md)", id)
				}
			}
			if t.Failed() {
				t.Logf("suite output:\n%s", log)
			}
		})
	}
}

func read(t *testing.T, dir string) []Check {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*", "checks.json"))
	var all []Check
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var cs []Check
		if err := json.Unmarshal(b, &cs); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		all = append(all, cs...)
	}
	return all
}
