package docstest_test

import (
	"context"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/docstest"
	"github.com/mcp-elicitation/elicitation/internal/testenv"
)

var (
	buildOnce sync.Once
	bins      map[string]string
	buildErr  error
)

// checker builds our programs from the tree (their flag sets are read
// from their -h) and returns a Checker over the repository. Building them is
// a slow suite: -short skips the tests that need it.
func checker(t *testing.T) *docstest.Checker {
	t.Helper()
	testenv.Slow(t, "built programs (docs)")
	root := testenv.Root(t)
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "docstest-bin-")
		if err != nil {
			buildErr = err
			return
		}
		cmd := exec.Command("go", "build", "-o", dir+string(filepath.Separator), "./cmd/elicitation", "./cmd/mcp-elicitation-proxy", "./cmd/elicitation-bench")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = err
			t.Logf("%s", out)
			return
		}
		bins = map[string]string{
			"elicitation":           filepath.Join(dir, "elicitation"),
			"mcp-elicitation-proxy": filepath.Join(dir, "mcp-elicitation-proxy"),
			"elicitation-bench":     filepath.Join(dir, "elicitation-bench"),
		}
	})
	if buildErr != nil {
		t.Fatalf("build the programs: %v", buildErr)
	}
	// The Inspector 2.x asks for Node 22.19 or later (the system's may be
	// older) and keeps a catalog under ~/.mcp-inspector: the commands run
	// with package.json's Node 22 first on PATH and a scratch HOME.
	path := filepath.Dir(testenv.Node22(t)) + string(os.PathListSeparator) + os.Getenv("PATH")
	return &docstest.Checker{Root: root, Bin: bins, Env: []string{"XDG_DATA_HOME=" + t.TempDir(), "HOME=" + t.TempDir(), "PATH=" + path}}
}

// TestDocs checks every code block of README.md, docs/*.md and
// examples/*.md (the convention is in docs/hosts.md, "Docs under test").
func TestDocs(t *testing.T) {
	c := checker(t)
	c.Server = startServer(t, c.Bin["elicitation"])
	files, err := docstest.DocFiles(c.Root)
	if err != nil {
		t.Fatal(err)
	}
	blocks, errs := c.CheckFiles(context.Background(), files)
	for _, err := range errs {
		t.Error(err)
	}
	counts := map[docstest.Kind]int{}
	for _, b := range blocks {
		counts[docstest.Classify(b)]++
	}
	t.Logf("%d files, %d blocks: %d shell, %d JSON, %d YAML, %d prose", len(files), len(blocks), counts[docstest.Shell], counts[docstest.JSON], counts[docstest.YAML], counts[docstest.Prose])
	if counts[docstest.Shell] == 0 || counts[docstest.JSON] == 0 {
		t.Errorf("no shell or no JSON block found: the extraction is broken")
	}
	t.Logf("%d commands ran against the started server", c.Ran)
	if c.Ran < 3 {
		t.Errorf("only %d commands ran against the started server (the README's Inspector call, elicitation connect …): the run step is broken", c.Ran)
	}
}

// startServer runs "elicitation serve" on a free loopback port with a
// scratch data directory and returns its base URL.
func startServer(t *testing.T, bin string) string {
	t.Helper()
	return serveOn(t, bin, "127.0.0.1", testenv.FreePort(t), t.TempDir())
}

// serveOn runs "elicitation serve" on host:port (127.0.0.1 or ::1) with
// the data directory and flags given, and returns its base URL once it
// answers.
func serveOn(t *testing.T, bin, host string, port int, dataDir string, flags ...string) string {
	t.Helper()
	addr := net.JoinHostPort(host, strconv.Itoa(port))
	base := "http://" + addr
	var logs testenv.SyncBuffer
	cmd := exec.Command(bin, append([]string{"serve", "--addr", addr, "--data-dir", dataDir, "--log-level", "warn"}, flags...)...)
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		res, err := http.Get(base + "/healthz")
		if err == nil {
			_ = res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return base
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("elicitation serve did not answer on %s: %v\n%s", base, err, logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}
