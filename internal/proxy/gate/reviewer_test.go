package gate_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/testenv"
)

// Answer is what a reviewer does on a review page in Chromium.
type Answer struct {
	// Decision is "submitted" (Approve, Submit) or "declined".
	Decision string `json:"decision"`
	// Fill types values into the form's fields, by field name.
	Fill map[string]string `json:"fill,omitempty"`
	// Pick taps the option at this index (a selection); nil taps none.
	Pick *int `json:"pick,omitempty"`
	// Comment is typed into the page's comment field.
	Comment string `json:"comment,omitempty"`
}

// Answered is what the browser saw.
type Answered struct {
	OK      bool   `json:"ok"`
	Status  int    `json:"status"`
	Heading string `json:"heading"`
	// Shown is the page's main text before the answer.
	Shown string `json:"shown"`
	Error string `json:"error"`
}

// Chromium finds the browser, and fails (never skips) with what to install
// when it is missing.
func Chromium(t testing.TB) string {
	t.Helper()
	p := os.Getenv("CHROMIUM_PATH")
	if p == "" {
		p = "/usr/bin/chromium"
	}
	if _, err := os.Stat(p); err != nil {
		if lp, err := exec.LookPath("chromium"); err == nil {
			return lp
		}
		t.Fatalf("the gate's browser tests need Chromium at %s (or CHROMIUM_PATH): run `apt-get install -y chromium`", p)
	}
	return p
}

// Review opens reviewURL in headless Chromium and answers it as a reviewer
// taps it on a phone; the test fails if the page does not accept the answer.
func Review(t testing.TB, reviewURL string, a Answer) Answered {
	t.Helper()
	node := testenv.Node(t)
	testenv.NodeModule(t, filepath.Join("playwright-core", "package.json"))
	plan := map[string]any{"chromium": Chromium(t), "url": reviewURL, "decision": a.Decision, "fill": a.Fill, "comment": a.Comment}
	if a.Pick != nil {
		plan["pick"] = *a.Pick
	}
	b, _ := json.Marshal(plan)
	path := filepath.Join(t.TempDir(), "plan.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	script := filepath.Join(testenv.Root(t), "internal", "proxy", "gate", "browsertest", "review.mjs")
	cmd := exec.CommandContext(ctx, node, script, path)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node review.mjs: %v\n%s", err, stderr.String())
	}
	var out Answered
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("node output: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	if !out.OK {
		t.Fatalf("the review page did not take the answer: %s", out.Error)
	}
	return out
}
