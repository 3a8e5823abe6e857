// Package conformancetest runs the official MCP conformance suite
// (npm @modelcontextprotocol/conformance, on Node 22) against a server
// from a Go test: every server scenario a specification revision requires
// (its frozen requirement set, --requirements), at that revision's wire,
// and fails on any check that is not a success unless it is known, with
// the reason (docs/protocol.md "Conformance" lists each scenario).
package conformancetest

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/testenv"
)

// The revisions whose requirement sets the suite freezes.
const (
	Rev20251125 = "2025-11-25"
	Rev20260728 = "2026-07-28"
)

// Known are the scenarios and checks of a run that may end other than
// SUCCESS, with why. A key is a scenario's name (the whole scenario: it
// does not apply to the server, for example it calls the suite's own
// fixture tools) or "scenario/check-id" (that one check).
type Known map[string]string

// With returns a copy of k with more's entries added.
func (k Known) With(more Known) Known {
	out := Known{}
	for key, why := range k {
		out[key] = why
	}
	for key, why := range more {
		out[key] = why
	}
	return out
}

// Check is one check of the suite's checks.json.
type Check struct {
	ID           string `json:"id"`
	Status       string `json:"status"`
	Description  string `json:"description"`
	ErrorMessage string `json:"errorMessage"`
}

// Run runs every server scenario of revision's requirement set (scored or
// not) against the MCP endpoint url, and reports each as a subtest.
func Run(t *testing.T, url, revision string, known Known) {
	t.Helper()
	node := testenv.Node22(t)
	suite := testenv.NodeModule(t, "@modelcontextprotocol/conformance/dist/index.js")
	want := scenarios(t, node, suite, revision)
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, suite, "server", "--url", url, "--requirements", revision, "-o", out)
	log, _ := cmd.CombinedOutput() // it exits non-zero on failures: the checks decide
	got := readDir(t, out, resultDir)
	for key := range known {
		if name, _, _ := strings.Cut(key, "/"); !want[name] {
			t.Errorf("known %q names no scenario of the %s requirements", key, revision)
		}
	}
	names := make([]string, 0, len(want))
	for name := range want {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			checks, ok := got[name]
			if !ok || len(checks) == 0 {
				t.Fatalf("the suite recorded no checks for %s:\n%s", name, log)
			}
			judge(t, name, checks, known)
		})
	}
	if t.Failed() {
		t.Logf("suite output:\n%s", log)
	}
}

// judge fails t on each check of scenario name that is not a success and
// not known, and on each known one that now passes.
func judge(t *testing.T, name string, checks []Check, known Known) {
	t.Helper()
	whole, skip := known[name]
	failed := false
	seen := map[string]bool{}
	for _, c := range checks {
		switch c.Status {
		case "SUCCESS", "INFO":
			continue
		}
		failed = true
		seen[c.ID] = true
		if why, ok := known[name+"/"+c.ID]; ok {
			t.Logf("known %s %s (%s): %s", c.Status, c.ID, why, c.ErrorMessage)
			continue
		}
		if skip {
			continue
		}
		t.Errorf("%s %s: %s: %s", c.Status, c.ID, c.Description, c.ErrorMessage)
	}
	if skip {
		if !failed {
			t.Errorf("scenario %s, known not to apply (%s), now passes: drop it from the list (and docs/protocol.md)", name, whole)
		} else {
			t.Logf("does not apply: %s", whole)
		}
	}
	for key := range known {
		if id, ok := strings.CutPrefix(key, name+"/"); ok && !seen[id] {
			t.Errorf("known check %s now passes: drop it from the list (and docs/protocol.md)", key)
		}
	}
}

// listed matches a server scenario in `conformance list --server`'s
// output: "  - name" in the scored list, "    - name [server]" among the
// scenarios run but not scored.
var listed = regexp.MustCompile(`^\s+- ([a-z0-9-]+)( \[server\])?$`)

// scenarios are the server scenarios of revision's requirement set.
func scenarios(t *testing.T, node, suite, revision string) map[string]bool {
	t.Helper()
	out, err := exec.Command(node, suite, "list", "--server", "--requirements", revision).CombinedOutput()
	if err != nil {
		t.Fatalf("conformance list --requirements %s: %v\n%s", revision, err, out)
	}
	names := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	section := ""
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, " ") {
			section = line
			continue
		}
		m := listed.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		if strings.HasPrefix(section, "Server scenarios") || m[2] != "" {
			names[m[1]] = true
		}
	}
	if len(names) == 0 {
		t.Fatalf("conformance list --requirements %s names no server scenario:\n%s", revision, out)
	}
	return names
}

// result directories are named server-<scenario>-<timestamp>.
var resultDir = regexp.MustCompile(`^server-(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$`)

// readDir returns the checks the suite saved under dir, by scenario: the
// result directories named as pattern says, its first group the scenario.
func readDir(t *testing.T, dir string, pattern *regexp.Regexp) map[string][]Check {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*", "checks.json"))
	all := map[string][]Check{}
	for _, f := range files {
		m := pattern.FindStringSubmatch(filepath.Base(filepath.Dir(f)))
		if m == nil {
			t.Fatalf("%s: not a scenario's result directory", f)
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var cs []Check
		if err := json.Unmarshal(b, &cs); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		all[m[1]] = append(all[m[1]], cs...)
	}
	return all
}
