package notify_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mcp-elicitation/elicitation/internal/notify"
	"github.com/mcp-elicitation/elicitation/internal/testenv"
)

// TestDocsConfigs: every configuration document in docs/notifications.md
// (a YAML block with targets) is one the service takes, so that the guide
// cannot drift from the parser.
func TestDocsConfigs(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join(testenv.Root(t), "docs", "notifications.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllStringSubmatch(string(b), -1)
	n := 0
	for _, m := range blocks {
		if !strings.Contains(m[1], "targets:") {
			continue
		}
		n++
		if _, err := notify.ParseRouting([]byte(m[1])); err != nil {
			t.Errorf("docs/notifications.md: a configuration the service refuses: %v\n%s", err, m[1])
		}
	}
	if n < 3 {
		t.Errorf("found %d configuration blocks, want the guide's (at least 3)", n)
	}
}
