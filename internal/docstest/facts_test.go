package docstest_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mcp-elicitation/elicitation/internal/testenv"
)

// The facts the prose states that no code block carries (#38 item 11):
// each is checked against where the truth lives.

func readDoc(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testenv.Root(t), rel))
	if err != nil {
		t.Fatal(err)
	}
	// Prose wraps at any space: compare it as one line.
	return strings.Join(strings.Fields(string(b)), " ")
}

var numberWords = []string{"no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"}

// TestLambdaFunctionCount: every "N … Lambda functions" and "N bootstraps"
// in the README and the docs that count them is the number template.yaml
// deploys.
func TestLambdaFunctionCount(t *testing.T) {
	t.Parallel()
	n := strings.Count(readDoc(t, "template.yaml"), "Type: AWS::Serverless::Function")
	if n == 0 || n >= len(numberWords) {
		t.Fatalf("template.yaml deploys %d functions", n)
	}
	count := regexp.MustCompile(`(?i)\b(` + strings.Join(numberWords[1:], "|") + `)((?: [\w-]+)?) (Lambda functions|bootstraps)\b`)
	for _, rel := range []string{"README.md", "docs/configuration.md", "docs/deploy.md"} {
		found := 0
		for _, m := range count.FindAllStringSubmatch(readDoc(t, rel), -1) {
			found++
			if !strings.EqualFold(m[1], numberWords[n]) {
				t.Errorf("%s says %q; template.yaml deploys %s", rel, m[0], numberWords[n])
			}
		}
		if found == 0 {
			t.Errorf("%s no longer counts the Lambda functions: update this test", rel)
		}
	}
}

// TestSAMLocalNeedsDocker: where the docs show sam local invoke, they say
// that it needs Docker (it runs the function in a container).
func TestSAMLocalNeedsDocker(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join(testenv.Root(t), "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	seen := false
	for _, f := range append(files, filepath.Join(testenv.Root(t), "README.md")) {
		rel, _ := filepath.Rel(testenv.Root(t), f)
		doc := readDoc(t, rel)
		i := strings.Index(doc, "sam local invoke")
		if i < 0 {
			continue
		}
		seen = true
		if near := doc[max(i-300, 0):min(i+300, len(doc))]; !strings.Contains(near, "Docker") {
			t.Errorf("%s shows sam local invoke without saying it needs Docker:\n%s", rel, near)
		}
	}
	if !seen {
		t.Error("no doc mentions sam local invoke: update this test")
	}
}

// TestReviewPageSignedOut: a signed-out visitor of /review/{id} on a
// deployment with sign-in is sent to sign in (reviewauth.Wrap redirects
// every GET without a session), not given the wrong key's 404.
func TestReviewPageSignedOut(t *testing.T) {
	t.Parallel()
	doc := readDoc(t, "docs/review-page.md")
	i := strings.Index(doc, "### Opening a request without its key")
	if i < 0 {
		t.Fatal("docs/review-page.md has no section on /review/{id}")
	}
	section := doc[i:]
	if j := strings.Index(section[1:], "#"); j > 0 {
		section = section[:j+1]
	}
	if !strings.Contains(section, "not signed in is sent to sign in") {
		t.Errorf("the section on /review/{id} does not say a signed-out visitor is sent to sign in:\n%s", section)
	}
	if regexp.MustCompile(`\(not signed in[^)]*\) gets the same 404`).MatchString(section) {
		t.Errorf("the section on /review/{id} gives a signed-out visitor the 404:\n%s", section)
	}
	auth := readDoc(t, "internal/reviewauth/auth.go")
	if !strings.Contains(auth, "if r.Method == http.MethodGet || r.Method == http.MethodHead { a.login(w, r, r.URL.RequestURI())") {
		t.Error("reviewauth.Wrap no longer sends a GET without a session to sign in: update docs/review-page.md and this test")
	}
}

// TestShortSuiteTime: the README's time for go test -short ./... is the
// one docs/benchmarks.md measured.
func TestShortSuiteTime(t *testing.T) {
	t.Parallel()
	readme, bench := readDoc(t, "README.md"), readDoc(t, "docs/benchmarks.md")
	m := regexp.MustCompile("`go test -short \\./\\.\\.\\.` skips [^:]*: ([0-9][^;]*?) on the shared 2-core machine with its build cache warm").FindStringSubmatch(readme)
	if m == nil {
		t.Fatal("README.md no longer states the -short suite's time with a warm build cache: update this test")
	}
	for _, figure := range regexp.MustCompile(`\d+ min \d+ s`).FindAllString(m[1], -1) {
		if !strings.Contains(bench, "| "+figure+" |") && !strings.Contains(bench, "**"+figure+"**") {
			t.Errorf("README.md's -short time %q is not a figure of docs/benchmarks.md's table", figure)
		}
	}
}
