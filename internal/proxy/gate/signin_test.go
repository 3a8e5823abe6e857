package gate_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/proxy"
	"github.com/mcp-elicitation/elicitation/internal/proxy/config"
	"github.com/mcp-elicitation/elicitation/internal/proxy/gate"
	"github.com/mcp-elicitation/elicitation/internal/reviewauth"
	"github.com/mcp-elicitation/elicitation/internal/reviewauth/oidctest"
	"github.com/mcp-elicitation/elicitation/internal/testenv"
)

var pageToken = regexp.MustCompile(`name="token" value="([^"]+)"`)

// With reviewer sign-in on the gate's service (against a real OpenID
// provider) and a named reviewer, the agent cannot approve its own gated
// call with the review URL it is handed: without a session the page sends
// it to sign in and takes no decision, a signed-in account that is not
// the named reviewer is refused, and the call stays held; the named
// reviewer approves, and the retry forwards the call once. It holds for
// the embedded service (elicitation_service.embedded.sign_in) and for a
// service reached by URL that signs its reviewers in. The gate does not
// warn at start-up.
func TestGateWithSignInAgentCannotApprove(t *testing.T) {
	testenv.Slow(t, "the OpenID provider")
	t.Parallel()
	embeddedAddr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
	serviceAddr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
	provider := oidctest.Start(t, "http://"+embeddedAddr+reviewauth.CallbackPath, "http://"+serviceAddr+reviewauth.CallbackPath)
	signIn := fmt.Sprintf("sign_in:\n  issuer: %q\n  client_id: %q\n  client_secret_env: GATE_OIDC_SECRET\n", provider.Issuer, oidctest.ClientID)
	// The service reached by URL: an elicitation service with sign-in of
	// its own, running apart from the proxy's gate.
	svc, err := gate.StartEmbedded(context.Background(), gate.EmbeddedOptions{SignInSecret: oidctest.ClientSecret, Config: &config.EmbeddedService{
		Listen: serviceAddr, DataDir: t.TempDir(),
		SignIn: &config.SignIn{Issuer: provider.Issuer, ClientID: oidctest.ClientID, GroupsClaim: "groups"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Close() })
	for name, service := range map[string]string{
		"embedded": fmt.Sprintf("  embedded:\n    listen: %q\n%s", embeddedAddr, indent(signIn, "    ")),
		"url":      fmt.Sprintf("  url: %q\n", ServeMCP(t, svc)),
	} {
		t.Run(name, func(t *testing.T) { agentCannotApprove(t, service) })
	}
}

func indent(s, by string) string {
	return by + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n"+by) + "\n"
}

func agentCannotApprove(t *testing.T, service string) {
	upstream := recordingUpstream()
	up := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return upstream }, nil))
	t.Cleanup(up.Close)
	yaml := fmt.Sprintf("upstream:\n  url: %q\nelicitation_service:\n  wait_seconds: 1\n  reviewers: [bob@example.com]\n%s%s", up.URL, service, shapeRules)
	log := &testenv.SyncBuffer{}
	agent := gatedClient(t, yaml, gate.OpenOptions{SignInSecret: oidctest.ClientSecret, Logger: slog.New(slog.NewTextHandler(log, nil))})
	if strings.Contains(log.String(), "level=WARN") {
		t.Errorf("a gate with sign-in warned:\n%s", log.String())
	}

	p := wantPending(t, call(t, agent, "delete_file", map[string]any{"path": "/etc/passwd"}))
	// The agent, holding the URL: no session, so no page and no token.
	bare := &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := bare.Get(p.ReviewURL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther && resp.StatusCode != http.StatusFound || pageToken.Match(body) {
		t.Errorf("the review URL without a session: %s, token on the page: %v", resp.Status, pageToken.Match(body))
	}
	resp, err = bare.PostForm(p.ReviewURL, url.Values{"token": {"forged"}, "decision": {"submitted"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		t.Error("a POST without a session was taken")
	}
	// An account at the provider that is not the named reviewer.
	self := oidctest.Browser(t)
	if resp, _, err := oidctest.SignIn(context.Background(), self, p.ReviewURL, "agent"); err != nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("the agent's own account: %v %v", resp, err)
	}
	wantPending(t, call(t, agent, "delete_file", map[string]any{"path": "/etc/passwd"}))

	bob := oidctest.Browser(t)
	resp, page, err := oidctest.SignIn(context.Background(), bob, p.ReviewURL, "bob")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("bob's page: %v %v", resp, err)
	}
	tok := pageToken.FindStringSubmatch(page)
	if tok == nil {
		t.Fatalf("no token on bob's page:\n%.600s", page)
	}
	resp, err = bob.PostForm(p.ReviewURL, url.Values{"token": {tok[1]}, "decision": {"submitted"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("bob's approval: %s", resp.Status)
	}
	if r := call(t, agent, "delete_file", map[string]any{"path": "/etc/passwd"}); r.text != "delete_file ran" {
		t.Fatalf("after bob's approval: %q %+v", r.text, r.gate)
	}
	if got := upstreamCalls(t, agent); len(got) != 1 {
		t.Errorf("the upstream ran %q", got)
	}
}

// A gate whose reviewers do not sign in says so at start-up, on the
// proxy's log, naming what it does not stop; so does an embedded service
// that signs reviewers in but names none, since any account the provider
// signs in then decides. The provider is not reached at start-up (sign-in
// discovers it on first use), so its address here answers nothing.
func TestGateWithoutSignInWarns(t *testing.T) {
	local := Start(t)
	own := []string{"approve its own gated calls", "elicitation_service.reviewers"}
	signIn := "    sign_in:\n      issuer: http://127.0.0.1:1/\n      client_id: web\n      client_secret_env: GATE_OIDC_SECRET\n"
	for name, tc := range map[string]struct {
		service string
		want    []string
	}{
		"embedded":               {"  embedded:\n    listen: 127.0.0.1:0\n", append([]string{"embedded elicitation service has no reviewer sign-in"}, own...)},
		"url":                    {fmt.Sprintf("  url: %q\n", local.MCPURL), append([]string{"the human gate names no reviewers"}, own...)},
		"url with reviewers":     {fmt.Sprintf("  url: %q\n  reviewers: [bob@example.com]\n", local.MCPURL), nil},
		"sign-in, no reviewers":  {"  embedded:\n    listen: 127.0.0.1:0\n" + signIn, []string{"signs reviewers in but names none", "any account the OpenID provider signs in may approve", "elicitation_service.reviewers", "http://127.0.0.1:1/"}},
		"sign-in with reviewers": {"  reviewers: [bob@example.com, \"group:ops\"]\n  embedded:\n    listen: 127.0.0.1:0\n" + signIn, nil},
	} {
		t.Run(name, func(t *testing.T) {
			cfg, err := config.ParseWith([]byte("upstream:\n  url: http://127.0.0.1:1/mcp\nelicitation_service:\n"+tc.service+shapeRules), config.Options{})
			if err != nil {
				t.Fatal(err)
			}
			var log bytes.Buffer
			_, closer, err := gate.Open(context.Background(), cfg, gate.OpenOptions{Logger: slog.New(slog.NewTextHandler(&log, nil)), SignInSecret: "not-in-the-log"})
			if err != nil {
				t.Fatal(err)
			}
			_ = closer.Close()
			out := log.String()
			want := 0
			if tc.want != nil {
				want = 1
			}
			if warns := strings.Count(out, "level=WARN"); warns != want {
				t.Errorf("start-up log has %d warnings, want %d:\n%s", warns, want, out)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("start-up log:\n%s\nwant a warning saying %q", out, w)
				}
			}
			if strings.Contains(out, "not-in-the-log") {
				t.Errorf("the client secret is in the log:\n%s", out)
			}
		})
	}
}

// With sign-in on the embedded service and no reviewers named, the
// warning above is true: the agent's own account at the provider signs
// in, approves its gated call, and the retry forwards it.
func TestGateWithSignInNoReviewersAnyAccountDecides(t *testing.T) {
	testenv.Slow(t, "the OpenID provider")
	t.Parallel()
	addr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
	provider := oidctest.Start(t, "http://"+addr+reviewauth.CallbackPath)
	upstream := recordingUpstream()
	up := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return upstream }, nil))
	t.Cleanup(up.Close)
	yaml := fmt.Sprintf("upstream:\n  url: %q\nelicitation_service:\n  wait_seconds: 1\n  embedded:\n    listen: %q\n    sign_in:\n      issuer: %q\n      client_id: %q\n      client_secret_env: GATE_OIDC_SECRET\n%s",
		up.URL, addr, provider.Issuer, oidctest.ClientID, shapeRules)
	log := &testenv.SyncBuffer{}
	agent := gatedClient(t, yaml, gate.OpenOptions{SignInSecret: oidctest.ClientSecret, Logger: slog.New(slog.NewTextHandler(log, nil))})
	if !strings.Contains(log.String(), "any account the OpenID provider signs in may approve") {
		t.Errorf("no warning at start-up:\n%s", log.String())
	}

	p := wantPending(t, call(t, agent, "delete_file", map[string]any{"path": "/etc/passwd"}))
	self := oidctest.Browser(t)
	resp, page, err := oidctest.SignIn(context.Background(), self, p.ReviewURL, "agent")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("the agent's own account: %v %v", resp, err)
	}
	tok := pageToken.FindStringSubmatch(page)
	if tok == nil {
		t.Fatalf("no token on the agent's page:\n%.600s", page)
	}
	resp, err = self.PostForm(p.ReviewURL, url.Values{"token": {tok[1]}, "decision": {"submitted"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the agent's approval: %s", resp.Status)
	}
	if r := call(t, agent, "delete_file", map[string]any{"path": "/etc/passwd"}); r.text != "delete_file ran" {
		t.Fatalf("after the agent's approval: %q %+v", r.text, r.gate)
	}
	if got := upstreamCalls(t, agent); len(got) != 1 {
		t.Errorf("the upstream ran %q", got)
	}
}

// gatedClient starts the proxy and its gate (opts as the proxy's main
// passes them) over HTTP and returns an agent's client without
// elicitation.
func gatedClient(t *testing.T, yaml string, opts gate.OpenOptions) *mcp.ClientSession {
	t.Helper()
	cfg, err := config.ParseWith([]byte(yaml), config.Options{})
	if err != nil {
		t.Fatalf("%v\n%s", err, yaml)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	p, err := proxy.New(ctx, proxy.Options{Config: cfg, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	opts.Version, opts.Upstream = "test", p.CallUpstream
	g, closer, err := gate.Open(ctx, cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = closer.Close() })
	g.Install(p.Planner())
	srv := httptest.NewServer(p.HTTPHandler())
	t.Cleanup(srv.Close)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}
