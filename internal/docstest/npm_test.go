package docstest_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-elicitation/elicitation/internal/testenv"
)

// npmCI runs "npm ci --dry-run" for the repository's package.json and
// lock in a scratch directory, on the node binary in nodeDir.
func npmCI(t *testing.T, nodeDir string) string {
	t.Helper()
	root, dir := testenv.Root(t), t.TempDir()
	for _, f := range []string{"package.json", "package-lock.json"} {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("npm", "ci", "--dry-run", "--offline", "--no-audit", "--no-fund")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH="+nodeDir+string(os.PathListSeparator)+os.Getenv("PATH"), "npm_config_cache="+filepath.Join(dir, ".npm"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("npm ci --dry-run: %v\n%s", err, out)
	}
	return string(out)
}

// npmWarns tells whether npm printed a warning ("npm warn …" or "npm
// WARN …"); a package named like process-warning is not one.
func npmWarns(out string) bool {
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(strings.ToLower(strings.TrimSpace(line)), "npm warn") {
			return true
		}
	}
	return false
}

// The README names Node.js 22.22.2+ for the test peers, and make test-deps
// runs npm ci on Node 22 (installed from npm when the system's is older):
// on it, npm ci installs the lock without a warning.
func TestNpmCiIsCleanOnNode22(t *testing.T) {
	node22 := filepath.Dir(testenv.Node22(t))
	if out := npmCI(t, node22); npmWarns(out) {
		t.Fatalf("npm ci on Node 22 warns:\n%s", out)
	}
	// The same install on the machine's older Node warns: the check can fail.
	sys := testenv.Node(t)
	v, err := exec.Command(sys, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasPrefix(string(v), "v20.") {
		if out := npmCI(t, filepath.Dir(sys)); !strings.Contains(out, "EBADENGINE") {
			t.Errorf("npm ci on %s does not warn about engines; if the lock no longer needs Node 22, say so in the README", strings.TrimSpace(string(v)))
		}
	}
}
