package conformancetest

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/testenv"
)

// AuthorizationServer is what `conformance authorization` is run against:
// an OAuth 2.1 authorization server, its issuer, a public client
// registered there for CallbackURL(Port), and the person who signs in.
type AuthorizationServer struct {
	// Issuer is the issuer URL, exactly as the metadata names it.
	Issuer string
	// ClientID is a public client (PKCE alone) whose redirect URIs
	// include CallbackURL(Port).
	ClientID string
	// Resource is the RFC 8707 resource the token is asked for (the MCP
	// endpoint's URL); empty sends none.
	Resource string
	// Port is the suite's own callback server's, on 127.0.0.1.
	Port int
	// Browse is the person: it opens authURL, which the suite prints for
	// a browser, signs in and consents, and follows the redirect to the
	// suite's callback, where the suite takes the code and redeems it.
	Browse func(ctx context.Context, authURL string) error
}

// CallbackURL is the redirect URI the suite's authorization-code-grant
// scenario listens on and sends.
func CallbackURL(port int) string { return fmt.Sprintf("http://127.0.0.1:%d/callback", port) }

// RunAuthorization runs every authorization-server scenario of the suite
// (`conformance authorization`, all in one run: the code grant reads the
// metadata the first scenario fetched) against as, and reports each as a
// subtest judged as Run judges a server's.
func RunAuthorization(t *testing.T, as AuthorizationServer, known Known) {
	t.Helper()
	node := testenv.Node22(t)
	suite := testenv.NodeModule(t, "@modelcontextprotocol/conformance/dist/index.js")
	want := authorizationScenarios(t, node, suite)
	for key := range known {
		if name, _, _ := strings.Cut(key, "/"); !want[name] {
			t.Errorf("known %q names no authorization scenario", key)
		}
	}
	out := t.TempDir()
	// The suite waits up to 5 minutes for the callback; a person who
	// fails to arrive ends it sooner.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	args := []string{suite, "authorization", "--url", as.Issuer, "--client-id", as.ClientID, "--port", strconv.Itoa(as.Port), "-o", out}
	if as.Resource != "" {
		args = append(args, "--resource", as.Resource)
	}
	cmd := exec.CommandContext(ctx, node, args...)
	var log testenv.SyncBuffer
	cmd.Stderr = &log
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("conformance authorization: %v", err)
	}
	browsed := false
	sc := bufio.NewScanner(io.TeeReader(stdout, &log))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if browsed || !isAuthorizationURL(line, as.Issuer) {
			continue
		}
		browsed = true
		if err := as.Browse(ctx, line); err != nil {
			t.Errorf("the person at %s: %v", line, err)
			cancel() // the suite would wait for a callback that will not come
		}
	}
	_ = cmd.Wait() // it exits non-zero on failures: the checks decide
	if !browsed {
		t.Errorf("the suite printed no authorization URL on %s", as.Issuer)
	}
	got := readDir(t, out, authorizationDir)
	names := make([]string, 0, len(want))
	for name := range want {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			checks, ok := got[name]
			if !ok || len(checks) == 0 {
				t.Fatalf("the suite recorded no checks for %s:\n%s", name, log.String())
			}
			judge(t, name, checks, known)
		})
	}
	if t.Failed() {
		t.Logf("suite output:\n%s", log.String())
	}
}

// isAuthorizationURL: the line the suite prints for the browser, the
// issuer's authorization endpoint with a code request.
func isAuthorizationURL(line, issuer string) bool {
	return strings.HasPrefix(line, strings.TrimSuffix(issuer, "/")+"/") && strings.Contains(line, "response_type=code")
}

// listedAuthorization matches a scenario in `conformance list
// --authorization`'s output: "  - name [revisions]".
var listedAuthorization = regexp.MustCompile(`^\s+- ([a-z0-9-]+)( \[[^\]]*\])?$`)

// authorizationScenarios are the suite's authorization-server scenarios.
func authorizationScenarios(t *testing.T, node, suite string) map[string]bool {
	t.Helper()
	out, err := exec.Command(node, suite, "list", "--authorization").CombinedOutput()
	if err != nil {
		t.Fatalf("conformance list --authorization: %v\n%s", err, out)
	}
	names := map[string]bool{}
	for _, line := range strings.Split(string(out), "\n") {
		if m := listedAuthorization.FindStringSubmatch(line); m != nil {
			names[m[1]] = true
		}
	}
	if len(names) == 0 {
		t.Fatalf("conformance list --authorization names no scenario:\n%s", out)
	}
	return names
}

// authorization result directories are named
// authorization-server-<scenario>-<timestamp>.
var authorizationDir = regexp.MustCompile(`^authorization-server-(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$`)
