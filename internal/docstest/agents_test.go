package docstest_test

import (
	"bufio"
	"context"
	"html"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/docstest"
	"github.com/mcp-elicitation/elicitation/internal/testenv"
)

// quickStartFile is the file a reader saves a block of each language in,
// and what runs it: TypeScript on Node.js 22 (which strips the types),
// Python on python3 with its standard library only.
var quickStartFile = map[string]string{"ts": "agent.mts", "typescript": "agent.mts", "python": "agent.py"}

// checkedElsewhere names the docs whose TypeScript and Python blocks are
// not agents but programs another test runs and compares with the doc.
var checkedElsewhere = map[string]string{
	"docs/gate.md": "the upstream's receipt checks: internal/proxy/gate's TestGateDocShowsTheCheckedChecks",
}

// TestAgentQuickStarts runs every TypeScript and Python block of the docs
// (docs/agents.md) as a reader would, against a started server: each
// program prints the review link ("Review: URL"), the test approves the
// request on that page as a human does, and the program must print
// "Decision: submitted" and exit 0.
func TestAgentQuickStarts(t *testing.T) {
	c := checker(t)
	node := testenv.Node22(t)
	for _, m := range []string{"@modelcontextprotocol/sdk", "@modelcontextprotocol/client", "@modelcontextprotocol/ext-tasks"} {
		testenv.NodeModule(t, m+"/package.json")
	}
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Fatal("python3 is not on PATH: install it (apt-get install python3)")
	}
	run := map[string]string{"agent.mts": node, "agent.py": python}
	base := startServer(t, c.Bin["elicitation"])
	files, err := docstest.DocFiles(c.Root)
	if err != nil {
		t.Fatal(err)
	}
	ran := map[string]int{}
	for _, f := range files {
		src, err := os.ReadFile(filepath.Join(c.Root, f))
		if err != nil {
			t.Fatal(err)
		}
		blocks, err := docstest.Extract(f, src)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range blocks {
			name, ok := quickStartFile[b.Lang]
			if !ok || checkedElsewhere[filepath.ToSlash(b.File)] != "" {
				continue
			}
			ran[name]++
			t.Run(b.File+":"+strconv.Itoa(b.Line), func(t *testing.T) {
				t.Parallel()
				runQuickStart(t, c.Root, base, name, run[name], b.Text)
			})
		}
	}
	if ran["agent.mts"] < 2 || ran["agent.py"] < 1 {
		t.Errorf("ran %v: docs/agents.md's two TypeScript and one Python quick starts were not found", ran)
	}
}

var reviewLine = regexp.MustCompile(`^Review: (http://\S+/review/\S+)$`)

// runQuickStart saves src as name in a scratch directory that sees the
// repository's node_modules, runs it with ELICITATION_URL of the started
// server, and approves every review link it prints.
func runQuickStart(t *testing.T, root, base, name, interpreter, src string) {
	dir := t.TempDir()
	if err := os.Symlink(filepath.Join(root, "node_modules"), filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, interpreter, name)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "ELICITATION_URL="+base+"/mcp", "ELICITATION_API_KEY=", "PYTHONDONTWRITEBYTECODE=1")
	var stderr testenv.SyncBuffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	reviewed := 0
	lines := bufio.NewScanner(stdout)
	for lines.Scan() {
		line := lines.Text()
		out.WriteString(line + "\n")
		if m := reviewLine.FindStringSubmatch(line); m != nil {
			approve(t, base, m[1])
			reviewed++
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%s: %v\nstdout:\n%s\nstderr:\n%s", name, err, out.String(), stderr.String())
	}
	if reviewed != 1 || !strings.Contains(out.String(), "\nDecision: submitted\n") {
		t.Fatalf("%s printed (%d review links):\n%s\nstderr:\n%s", name, reviewed, out.String(), stderr.String())
	}
}

var tokenField = regexp.MustCompile(`name="token" value="([^"]+)"`)

// approve opens a review link and approves the request, as the human does.
func approve(t *testing.T, base, link string) {
	t.Helper()
	res, err := http.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	_ = res.Body.Close()
	m := tokenField.FindSubmatch(body)
	if res.StatusCode != http.StatusOK || m == nil {
		t.Fatalf("GET %s: %d, page token found: %v", link, res.StatusCode, m != nil)
	}
	form := url.Values{"token": {html.UnescapeString(string(m[1]))}, "decision": {"submitted"}}
	req, err := http.NewRequest(http.MethodPost, link, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", base)
	res, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	if res.StatusCode != http.StatusOK && res.StatusCode != http.StatusSeeOther {
		t.Fatalf("approve %s: %d", link, res.StatusCode)
	}
}
