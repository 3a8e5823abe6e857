package gate_test

import (
	"strings"
	"testing"

	"github.com/mcp-elicitation/elicitation/internal/proxy/gate"
	"github.com/mcp-elicitation/elicitation/internal/testenv"
)

// The reviewer's side in Chromium: the approval page shows the tool, its
// description and the masked arguments; Approve lets the retry through.
func TestBrowserConfirmPage(t *testing.T) {
	testenv.Slow(t, "Chromium")
	t.Parallel()
	e := newEnv(t, "tools:\n  delete_file:\n    confirm_if:\n      always: true\n", nil)
	args := `{"path":"/tmp/report.txt","api_key":"sk-live-123"}`
	p := payload(t, check(t, e.gate, rmTool, args, nil))
	seen := Review(t, p.ReviewURL, Answer{Decision: "submitted"})
	for _, want := range []string{"delete_file", "Deletes a file.", "/tmp/report.txt", gate.Masked, p.ArgumentsDigest} {
		if !strings.Contains(seen.Shown, want) {
			t.Errorf("the page does not show %q:\n%s", want, seen.Shown)
		}
	}
	if strings.Contains(seen.Shown, "sk-live-123") {
		t.Error("the page shows the secret")
	}
	if seen.Heading != "Approved" {
		t.Errorf("after Approve: %q", seen.Heading)
	}
	if d := check(t, e.gate, rmTool, args, nil); d.Result != nil {
		t.Fatalf("approved in the browser but not forwarded: %+v", payload(t, d))
	}
}
