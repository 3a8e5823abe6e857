package reviewauth_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/reviewauth"
	"github.com/mcp-elicitation/elicitation/internal/reviewauth/oidctest"
	"github.com/mcp-elicitation/elicitation/internal/testenv"
)

// The sign-in round trip in headless Chromium: the review link lands on
// the provider's login form, the reviewer signs in and is back on the
// page (which names them), decides, and a second visit needs no second
// sign-in. The browser keeps the one cookie as HttpOnly, Secure (Chromium
// treats http://127.0.0.1 as a secure origin), SameSite=Lax, on /review.
func TestSignInChromium(t *testing.T) {
	node := testenv.Node(t)
	testenv.NodeModule(t, filepath.Join("playwright-core", "package.json"))
	chromium := os.Getenv("CHROMIUM_PATH")
	if chromium == "" {
		chromium = "/usr/bin/chromium"
	}
	if _, err := os.Stat(chromium); err != nil {
		t.Fatalf("this test needs Chromium at %s (or CHROMIUM_PATH): apt-get install -y chromium", chromium)
	}
	s := newStack(t, elicitation.ReviewerPolicy{BarOwner: true}, boltStore(t))
	id, page := s.create(t, 0, "agent@example.com", elicitation.SelectionInput{Reviewers: []string{"alice@example.com"}})
	plan, _ := json.Marshal(map[string]string{"chromium": chromium, "reviewUrl": page, "user": "alice", "password": oidctest.Password, "pick": "us"})
	path := filepath.Join(t.TempDir(), "plan.json")
	if err := os.WriteFile(path, plan, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join("browsertest", "signin.mjs"), path)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node signin.mjs: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	var out struct {
		OK                                bool
		Error                             string
		Steps                             []string
		Reviewer, Result, Again, AgainURL string
		Cookies                           []struct {
			Name, Path, SameSite string
			HTTPOnly             bool `json:"httpOnly"`
			Secure               bool
		}
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil || !out.OK {
		t.Fatalf("browser: %v %s\n%s\n%s", err, out.Error, stdout.String(), stderr.String())
	}
	t.Logf("steps %v, reviewer %q, result %q, again %q", out.Steps, out.Reviewer, out.Result, out.Again)
	if len(out.Steps) != 2 || !strings.Contains(out.Steps[0], "/login/username") || out.Steps[1] != "back:true" {
		t.Errorf("steps %v: want the provider's login form, then back on the review page", out.Steps)
	}
	if out.Reviewer != "Signed in as alice@example.com" {
		t.Errorf("the page says %q, want the signed-in reviewer", out.Reviewer)
	}
	if out.Result != "Selection sent" || out.Again != "This request has been answered" || out.AgainURL != page {
		t.Errorf("result %q, second visit %q at %s", out.Result, out.Again, out.AgainURL)
	}
	n := 0
	for _, c := range out.Cookies {
		if c.Name == reviewauth.CookieName {
			n++
			if !c.HTTPOnly || !c.Secure || c.SameSite != "Lax" || c.Path != "/review" {
				t.Errorf("cookie %+v: want HttpOnly, Secure, SameSite=Lax, Path=/review", c)
			}
		}
	}
	if n != 1 {
		t.Errorf("Chromium holds %d %s cookies, want 1: %+v", n, reviewauth.CookieName, out.Cookies)
	}
	st := state(t, s.instances[0].svc, "agent@example.com", id)
	if st.Status != elicitation.StatusSubmitted || st.DecidedBy != "alice@example.com" {
		t.Fatalf("state %+v", st)
	}
}
