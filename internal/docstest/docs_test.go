package docstest_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/mcp-elicitation/elicitation/internal/docstest"
	"github.com/mcp-elicitation/elicitation/internal/testenv"
)

var (
	buildOnce sync.Once
	bins      map[string]string
	buildErr  error
)

// checker builds our two programs from the tree (their flag sets are read
// from their -h) and returns a Checker over the repository.
func checker(t *testing.T) *docstest.Checker {
	t.Helper()
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
	return &docstest.Checker{Root: root, Bin: bins, Env: []string{"XDG_DATA_HOME=" + t.TempDir()}}
}

// TestDocs checks every code block of README.md, docs/*.md and
// examples/*.md (the convention is in docs/hosts.md, "Docs under test").
func TestDocs(t *testing.T) {
	c := checker(t)
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
}
