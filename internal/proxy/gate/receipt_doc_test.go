package gate_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-elicitation/elicitation/internal/testenv"
)

// docs/gate.md shows the upstream checks the tests run: the TypeScript and
// Python files of testdata whole, and the Go example's check as it is.
func TestGateDocShowsTheCheckedChecks(t *testing.T) {
	t.Parallel()
	root := testenv.Root(t)
	read := func(rel string) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	doc := read("docs/gate.md")
	_, section, ok := strings.Cut(doc, "\n## Checking the approval upstream\n")
	if !ok {
		t.Fatal(`docs/gate.md has no section "Checking the approval upstream"`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	block := func(lang string) string {
		t.Helper()
		_, rest, ok := strings.Cut(section, "\n```"+lang+"\n")
		if !ok {
			t.Fatalf("no %s block in the section", lang)
		}
		text, _, _ := strings.Cut(rest, "\n```\n")
		return text + "\n"
	}
	for lang, file := range map[string]string{
		"ts":     "internal/proxy/gate/testdata/check-receipt.mts",
		"python": "internal/proxy/gate/testdata/check_receipt.py",
	} {
		if block(lang) != read(file) {
			t.Errorf("the %s block of docs/gate.md is not %s: copy the file into the doc", lang, file)
		}
	}
	if !strings.Contains(read("examples/receipt-upstream/main.go"), block("go")) {
		t.Error("the go block of docs/gate.md is not examples/receipt-upstream's check: copy it into the doc")
	}
}
