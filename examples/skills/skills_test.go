package skills

import (
	"strings"
	"testing"
)

func TestAskAHuman(t *testing.T) {
	sk := AskAHuman()
	if sk.Name != "ask-a-human" || len(sk.Description) < 40 || len(sk.Description) > 1024 {
		t.Fatalf("front matter: name %q, description %q", sk.Name, sk.Description)
	}
	if strings.HasPrefix(sk.Body, "---") || !strings.HasPrefix(sk.Body, "# ") {
		t.Fatalf("body does not start at its heading: %.80q", sk.Body)
	}
	// The loop and every outcome the issue names.
	for _, want := range []string{"elicit_approval", "elicit_selection", "reviewUrl", "elicit_await", "waitSeconds",
		`"pending"`, "elicit_result", "`submitted`", "`declined`", "comment", "`expired`", "`canceled`", "never open, fetch, or submit the review page yourself"} {
		if !strings.Contains(sk.Body, want) {
			t.Errorf("the skill does not mention %s", want)
		}
	}
}
