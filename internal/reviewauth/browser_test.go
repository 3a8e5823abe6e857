package reviewauth_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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
	t.Parallel()
	s := newStack(t, elicitation.ReviewerPolicy{BarOwner: true}, boltStore(t))
	id, page := s.create(t, 0, "agent@example.com", elicitation.Input{Reviewers: []string{"alice@example.com"}})
	stdout := chromiumScript(t, "signin.mjs", map[string]string{"reviewUrl": page, "user": "alice", "password": oidctest.Password, "pick": "us"})
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
	if err := json.Unmarshal(stdout, &out); err != nil || !out.OK {
		t.Fatalf("browser: %v %s\n%s", err, out.Error, stdout)
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

// chromiumScript runs browsertest/script with plan (and the Chromium path)
// and returns its one line of JSON.
func chromiumScript(t *testing.T, script string, plan map[string]string) []byte {
	t.Helper()
	node := testenv.Node(t)
	testenv.NodeModule(t, filepath.Join("playwright-core", "package.json"))
	chromium := os.Getenv("CHROMIUM_PATH")
	if chromium == "" {
		chromium = "/usr/bin/chromium"
	}
	if _, err := os.Stat(chromium); err != nil {
		t.Fatalf("this test needs Chromium at %s (or CHROMIUM_PATH): apt-get install -y chromium", chromium)
	}
	plan["chromium"] = chromium
	b, _ := json.Marshal(plan)
	path := filepath.Join(t.TempDir(), "plan.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join("browsertest", script), path)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node %s: %v\n%s\n%s", script, err, stdout.String(), stderr.String())
	}
	return stdout.Bytes()
}

// Cross-site request forgery from the same site, in Chromium: Bob is
// signed in; a page on another port of the same host auto-submits an
// approval to the review URL, with a page token rendered for Bob himself
// (so that only the origin check stands in the way). The session cookie
// goes along (SameSite=Lax does not stop a same-site POST), and the
// submission is refused (403, audited) without deciding; Bob's own answer
// on the page then counts.
func TestSameSiteForgeryChromium(t *testing.T) {
	testenv.Slow(t, "Chromium")
	t.Parallel()
	s := newStack(t, elicitation.ReviewerPolicy{BarOwner: true}, boltStore(t))
	id, page := s.create(t, 0, "agent@example.com", elicitation.Input{
		Message: "Rotate the keys?", Options: opts(), Approvals: 2, Reviewers: []string{"alice@example.com", "bob@example.com"},
	})
	// The forger holds a token of a render for Bob (the strongest case:
	// the token binding cannot refuse it).
	_, body := open(t, oidctest.Browser(t), page, "bob")
	m := tokenField.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no token on bob's page:\n%.600s", body)
	}
	attacker := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><form method="post" action="%s"><input name="token" value="%s"><input name="decision" value="submitted"><input name="option" value="a"></form><script>document.forms[0].submit()</script>`,
			html.EscapeString(page), html.EscapeString(html.UnescapeString(m[1])))
	}))
	t.Cleanup(attacker.Close)
	if attacker.URL[len("http://"):strings.LastIndexByte(attacker.URL, ':')] != "127.0.0.1" {
		t.Fatalf("the attacker's page %s is not on the review page's host", attacker.URL)
	}
	stdout := chromiumScript(t, "csrf.mjs", map[string]string{"reviewUrl": page, "attackUrl": attacker.URL, "user": "bob", "password": oidctest.Password, "pick": "a"})
	var out struct {
		OK                        bool
		Error, Reviewer           string
		ForgedStatus, OwnStatus   int
		ForgedHeading, OwnHeading string
		Posts                     []struct{ Origin, Site string }
	}
	if err := json.Unmarshal(stdout, &out); err != nil || !out.OK {
		t.Fatalf("browser: %v %s\n%s", err, out.Error, stdout)
	}
	t.Logf("posts %+v", out.Posts)
	if out.Reviewer != "Signed in as bob@example.com" {
		t.Errorf("the page says %q, want bob signed in", out.Reviewer)
	}
	if out.ForgedStatus != http.StatusForbidden || out.ForgedHeading != "This answer came from another site" {
		t.Errorf("the forged POST: %d %q, want 403 %q", out.ForgedStatus, out.ForgedHeading, "This answer came from another site")
	}
	// The page's own form goes with its real origin (the page's
	// Referrer-Policy is same-origin), which is why CheckOrigin can refuse
	// Origin: null.
	self := page[:strings.Index(page, "/review/")]
	if len(out.Posts) != 2 || out.Posts[0].Site != "same-site" || out.Posts[1].Site != "same-origin" || out.Posts[1].Origin != self {
		t.Errorf("the browser's POSTs %+v: want a same-site forgery, then a same-origin answer with Origin %s", out.Posts, self)
	}
	if out.OwnStatus != http.StatusOK || out.OwnHeading != "Your approval is counted" {
		t.Errorf("bob's own answer: %d %q", out.OwnStatus, out.OwnHeading)
	}
	st := state(t, s.instances[0].svc, "agent@example.com", id)
	if st.Status != elicitation.StatusPending || len(st.Approvers) != 1 || st.Approvers[0].By != "bob@example.com" {
		t.Fatalf("state %+v: want pending with bob's own approval only", st)
	}
	if got := trail(t, s.instances[0].svc, id); !slices.Contains(got, "submission_refused bob@example.com cross-origin submission") {
		t.Errorf("the forgery is not audited: %q", got)
	}
}

// Two sign-ins in parallel in one Chromium (two tabs that both reach the
// provider's login form before either signs in) both complete, and a
// stray callback afterwards leaves the session alone.
func TestTwoTabsChromium(t *testing.T) {
	testenv.Slow(t, "Chromium")
	t.Parallel()
	s := newStack(t, elicitation.ReviewerPolicy{}, boltStore(t))
	_, page1 := s.create(t, 0, "agent@example.com", elicitation.Input{})
	_, page2 := s.create(t, 0, "agent@example.com", elicitation.Input{})
	stdout := chromiumScript(t, "twotabs.mjs", map[string]string{
		"reviewUrl1": page1, "reviewUrl2": page2, "callbackUrl": s.instances[0].srv.URL + reviewauth.CallbackPath,
		"user": "alice", "password": oidctest.Password,
	})
	var out struct {
		OK                            bool
		Error                         string
		LoginForms                    []int
		Tabs                          []string
		StrayStatus                   int
		StrayHeading, AfterURL, After string
		Cookies                       []string
	}
	if err := json.Unmarshal(stdout, &out); err != nil || !out.OK {
		t.Fatalf("browser: %v %s\n%s", err, out.Error, stdout)
	}
	t.Logf("%+v", out)
	if !slices.Equal(out.LoginForms, []int{1, 1}) {
		t.Errorf("login forms %v: want both tabs on the provider's form at once", out.LoginForms)
	}
	if !slices.Equal(out.Tabs, []string{"Signed in as alice@example.com", "Signed in as alice@example.com"}) {
		t.Errorf("tabs %q: want both signed in", out.Tabs)
	}
	if out.StrayStatus != http.StatusBadRequest || out.StrayHeading != "Sign-in did not complete" {
		t.Errorf("stray callback: %d %q", out.StrayStatus, out.StrayHeading)
	}
	if out.AfterURL != page1 || out.After != "Signed in as alice@example.com" {
		t.Errorf("after the stray callback: %s %q, want still signed in", out.AfterURL, out.After)
	}
	for _, c := range out.Cookies {
		if strings.HasPrefix(c, reviewauth.LoginCookiePrefix) {
			t.Errorf("a sign-in cookie %s is left after both completed", c)
		}
	}
}
