package compose_test

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/compose"
	"github.com/mcp-elicitation/elicitation/internal/compose/embeddedstore"
	"github.com/mcp-elicitation/elicitation/internal/pagetoken"
	"github.com/mcp-elicitation/elicitation/internal/testenv"
)

var update = flag.Bool("update", false, "rewrite docs/configuration.md's table from compose.Table")

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// Every row names a distinct field: setting one row's variable changes
// what it alone reads.
func TestTableRowsBindDistinctFields(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, row := range compose.Table {
		if seen[row.Name] || row.Name != strings.ToLower(row.Name) || row.Usage == "" {
			t.Errorf("row %q: duplicate, not lower-case or without usage", row.Name)
		}
		seen[row.Name] = true
	}
	base := compose.Defaults()
	for _, row := range compose.Table {
		s := base
		v := row.Value(&s)
		before := v.String()
		for _, try := range []string{"7s", "true", "false", "debug", "12345", "127.0.0.1/32", "x-" + row.Name} {
			if v.Set(try) == nil && v.String() != before {
				break
			}
		}
		if v.String() == before {
			t.Errorf("--%s: no value changes it", row.Name)
			continue
		}
		if fmt.Sprint(s) == fmt.Sprint(base) {
			t.Errorf("--%s: setting it changed no field of Settings", row.Name)
		}
	}
}

func TestFromEnv(t *testing.T) {
	t.Parallel()
	s, err := compose.FromEnv(env(map[string]string{"HOME": "/home/ann"}), compose.Local)
	if err != nil {
		t.Fatal(err)
	}
	if s.Addr != "127.0.0.1:8080" || s.Store != "bolt" || s.MaxWait != 20*time.Second || s.Retention != 7*24*time.Hour ||
		s.DataDir != "/home/ann/.local/share/mcp-elicitation" || !s.Push || s.Stateless || s.RequireAPIKey || s.CleanupInterval != time.Hour ||
		s.OAuthRequestsPerSource != 3000 || s.OAuthRequestsPerClient != 10000 || s.OAuthRequests != 30000 {
		t.Errorf("local defaults: %+v", s)
	}
	s, err = compose.FromEnv(env(map[string]string{
		"XDG_DATA_HOME": "/x", "ELICITATION_MAX_WAIT": "5s", "ELICITATION_RETENTION": "0.5d", "ELICITATION_PUSH": "false",
		"ELICITATION_LOG_LEVEL": "debug", "ELICITATION_TOKEN_SECRET_ARN": "arn:ignored-locally",
	}), compose.Local)
	if err != nil {
		t.Fatal(err)
	}
	if s.DataDir != "/x/mcp-elicitation" || s.MaxWait != 5*time.Second || s.Retention != 12*time.Hour || s.Push || s.LogLevel.String() != "DEBUG" || s.TokenSecretARN != "" {
		t.Errorf("from the environment: %+v", s)
	}
	if s, err := compose.FromEnv(env(map[string]string{"ELICITATION_TRUSTED_PROXIES": "127.0.0.1/32, ::1"}), compose.Local); err != nil || s.TrustedProxies.String() != "127.0.0.1/32,::1/128" {
		t.Errorf("ELICITATION_TRUSTED_PROXIES: %v %v", s.TrustedProxies, err)
	}
	// The reviewers' decisions are counted unless both caps are 0.
	if s.ReviewLimiter() == nil {
		t.Error("no review limiter by default")
	}
	if s, err := compose.FromEnv(env(map[string]string{"ELICITATION_REVIEW_DECISIONS_PER_REVIEWER": "0", "ELICITATION_REVIEW_DECISIONS": "0"}), compose.Local); err != nil || s.ReviewLimiter() != nil {
		t.Errorf("both review caps 0: %v, limiter %v", err, s.ReviewLimiter())
	}
	// A session idle time above the longest wait, or none, is taken.
	for _, idle := range []string{"0s", "23s"} {
		if _, err := compose.FromEnv(env(map[string]string{"ELICITATION_MCP_SESSION_IDLE": idle}), compose.Local); err != nil {
			t.Errorf("ELICITATION_MCP_SESSION_IDLE=%s: %v", idle, err)
		}
	}
	// Only the names asked for are read.
	s, err = compose.FromEnv(env(map[string]string{"ELICITATION_TABLE": "t", "ELICITATION_MAX_WAIT": "soon"}), compose.Local, "table")
	if err != nil || s.Table != "t" {
		t.Errorf("FromEnv(table only) = %q, %v", s.Table, err)
	}
	for _, tc := range []struct{ k, v, want string }{
		{"ELICITATION_MAX_WAIT", "soon", `$ELICITATION_MAX_WAIT="soon": not a duration`},
		{"ELICITATION_MAX_WAIT", "0s", "--max-wait 0s: must be between 1s and 15m0s"},
		{"ELICITATION_RETENTION", "0s", "--retention 0s: must be positive"},
		{"ELICITATION_REQUIRE_API_KEY", "1x", `$ELICITATION_REQUIRE_API_KEY="1x": want true or false`},
		{"ELICITATION_STORE", "sqlite", `--store "sqlite": must be "bolt" or "dynamodb"`},
		{"ELICITATION_PUBLIC_URL", "example.com", `--public-url "example.com": want an absolute http(s) URL`},
		{"ELICITATION_LOG_LEVEL", "loud", "not debug, info, warn or error"},
		{"ELICITATION_TRUSTED_PROXIES", "127.0.0.1/32,localhost", `$ELICITATION_TRUSTED_PROXIES="127.0.0.1/32,localhost": "localhost" is neither a CIDR`},
		{"ELICITATION_OAUTH_REQUESTS_PER_SOURCE", "0", "--oauth-requests-per-source 0: must be at least 1"},
		{"ELICITATION_OAUTH_REQUESTS_PER_CLIENT", "0", "--oauth-requests-per-client 0: must be at least 1"},
		{"ELICITATION_OAUTH_REQUESTS", "-5", "--oauth-requests -5: must be at least 1"},
		{"ELICITATION_MCP_SESSION_IDLE", "22s", "--mcp-session-idle 22s: must exceed --max-wait (20s) plus --wait-margin (2s)"},
		{"ELICITATION_REVIEW_DECISIONS_PER_REVIEWER", "49", "--review-decisions-per-reviewer 49: must be 0 (no cap) or at least 50"},
		{"ELICITATION_REVIEW_DECISIONS", "-1", "--review-decisions -1: must be 0 (no cap) or at least 50"},
	} {
		if _, err := compose.FromEnv(env(map[string]string{tc.k: tc.v}), compose.Local); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s=%s: %v, want %q", tc.k, tc.v, err, tc.want)
		}
	}
}

func TestReviewURL(t *testing.T) {
	t.Parallel()
	r := httptest.NewRequest("POST", "http://agent.example:8080/mcp", nil)
	proxied := httptest.NewRequest("POST", "http://internal:8080/mcp", nil)
	proxied.Header.Set("X-Forwarded-Proto", "HTTPS, http")
	bogus := httptest.NewRequest("POST", "http://h/mcp", nil)
	bogus.Header.Set("X-Forwarded-Proto", "javascript")
	tlsReq := httptest.NewRequest("POST", "https://example.com/mcp", nil)
	for _, tc := range []struct {
		base string
		r    *http.Request
		want string
	}{
		{"http://192.168.1.20:8081/", r, "http://192.168.1.20:8081/review/I%2F1/K"},
		{"", r, "http://agent.example:8080/review/I%2F1/K"},
		{"", proxied, "https://internal:8080/review/I%2F1/K"},
		{"", bogus, "http://h/review/I%2F1/K"},
		{"", tlsReq, "https://example.com/review/I%2F1/K"},
		{"", nil, "/review/I%2F1/K"},
	} {
		if got := compose.ReviewURL(tc.base, tc.r, "I/1", "K"); got != tc.want {
			t.Errorf("ReviewURL(%q) = %q, want %q", tc.base, got, tc.want)
		}
	}
}

func TestKeyring(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	secret := pagetoken.GenerateSecret()
	s := compose.Defaults()
	s.DataDir = t.TempDir()

	// Kept in the data directory: the same keys on the next start.
	k1, err := compose.Keyring(ctx, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	k2, err := compose.Keyring(ctx, s, nil)
	if err != nil || k1.CurrentKeyID() != k2.CurrentKeyID() {
		t.Fatalf("second start: %v", err)
	}
	tok, _ := k1.Seal(pagetoken.Claims{ElicitationID: "e", RenderID: "r", Expires: time.Now().Add(time.Hour), RequestExpires: time.Now().Add(time.Hour)})
	if _, err := k2.Open(tok, time.Now()); err != nil {
		t.Errorf("a token of the first start is refused after a restart: %v", err)
	}

	// A secret, read with the deployment's reader; a bare value is k0.
	s.TokenSecretARN = "arn:secret"
	var asked string
	k, err := compose.Keyring(ctx, s, func(_ context.Context, arn string) (string, error) { asked = arn; return secret, nil })
	if err != nil || asked != "arn:secret" || k.CurrentKeyID() != compose.InitialKeyID {
		t.Errorf("from the secret: %v, asked %q", err, asked)
	}
	if _, err := compose.Keyring(ctx, s, func(context.Context, string) (string, error) { return "", errors.New("denied") }); err == nil || !strings.Contains(err.Error(), "arn:secret") {
		t.Errorf("a failing secret read: %v", err)
	}
	if _, err := compose.Keyring(ctx, s, nil); err == nil {
		t.Error("a secret ARN without a reader was accepted")
	}
	// The keyring text wins over both.
	s.TokenKeys = "k9:" + secret
	if k, err := compose.Keyring(ctx, s, nil); err != nil || k.CurrentKeyID() != "k9" {
		t.Errorf("from the keyring text: %v", err)
	}
	s.TokenKeys = "bad"
	if _, err := compose.Keyring(ctx, s, nil); err == nil || !strings.Contains(err.Error(), "--token-keys") {
		t.Errorf("bad keyring text: %v", err)
	}
}

// Build composes only the parts asked for, over one service, and closes
// the store.
func TestBuild(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := compose.Defaults()
	s.DataDir = t.TempDir()
	s.PublicURL = "http://review.example"
	app, err := compose.Build(ctx, s, compose.Parts{Store: embeddedstore.Open})
	if err != nil {
		t.Fatal(err)
	}
	if app.Service == nil || app.Templates == nil || app.Pages != nil || app.MCP != nil || app.Keys != nil {
		t.Errorf("store only: %+v", app)
	}
	if got := app.ReviewURL(nil, "id", "key"); got != "http://review.example/review/id/key" {
		t.Errorf("ReviewURL = %q", got)
	}
	if err := app.Close(); err != nil {
		t.Fatal(err)
	}
	app, err = compose.Build(ctx, s, compose.Parts{Store: embeddedstore.Open, Pages: compose.Pages})
	if err != nil {
		t.Fatal(err)
	}
	defer app.Close()
	if app.Pages == nil || app.Keys == nil {
		t.Errorf("with pages: %+v", app)
	}
	// A part that fails closes the store it opened (bolt holds a lock a
	// second open would wait on).
	s2 := s
	s2.DataDir = t.TempDir()
	if _, err := compose.Build(ctx, s2, compose.Parts{Store: embeddedstore.Open, MCP: func(context.Context, *compose.App) (http.Handler, error) {
		return nil, errors.New("no")
	}}); err == nil {
		t.Fatal("a failing part did not fail Build")
	}
	again, err := compose.Build(ctx, s2, compose.Parts{Store: embeddedstore.Open})
	if err != nil {
		t.Fatalf("the store of a failed Build is still open: %v", err)
	}
	again.Close()
}

// docs/configuration.md lists every setting, generated from Table (run
// go test ./internal/compose -update after adding one).
func TestConfigurationDoc(t *testing.T) {
	t.Parallel()
	path := filepath.Join(testenv.Root(t), "docs", "configuration.md")
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const begin, end = "<!-- settings: generated by go test ./internal/compose -update -->\n", "<!-- end of settings -->\n"
	i, j := bytes.Index(doc, []byte(begin)), bytes.Index(doc, []byte(end))
	if i < 0 || j < i {
		t.Fatalf("%s lacks the generated section's markers", path)
	}
	var b strings.Builder
	b.WriteString("| flag | environment variable | where | default | meaning |\n|---|---|---|---|---|\n")
	for _, row := range compose.Table {
		where := map[compose.Scope]string{compose.Local: "local", compose.Lambda: "Lambda", compose.Both: "both"}[row.Scope]
		def := row.Default
		if row.Name == "data-dir" {
			def = "$XDG_DATA_HOME/mcp-elicitation, else ~/.local/share/mcp-elicitation"
		}
		if def == "" {
			def = "—"
		} else {
			def = "`" + def + "`"
		}
		if row.Required&compose.Lambda != 0 {
			def += " (required on Lambda)"
		}
		usage := strings.ReplaceAll(row.Usage, "|", "\\|")
		if row.Renamed != "" {
			usage += " (was `" + row.Renamed + "` on Lambda)"
		}
		fl := "`--" + row.Name + "`"
		if !row.In(compose.Local) {
			fl = "—"
		}
		fmt.Fprintf(&b, "| %s | `%s` | %s | %s | %s |\n", fl, compose.Env(row.Name), where, def, usage)
	}
	want := string(doc[:i+len(begin)]) + b.String() + string(doc[j:])
	if *update {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if string(doc) != want {
		t.Errorf("%s's settings table is not compose.Table's: run go test ./internal/compose -update", path)
	}
}

// The push-state keys: the keyring text, else the secret (a bare generated
// value is k0), else kept in the embedded store's data directory; none
// (no sessionless push) for a shared DynamoDB table without keys; a bad
// value or an unreadable secret is an error naming it.
func TestStateKeys(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	secret := pagetoken.GenerateSecret()
	app := func(mut func(*compose.Settings), read func(context.Context, string) (string, error)) *compose.App {
		s := compose.Defaults()
		s.DataDir = t.TempDir()
		mut(&s)
		return &compose.App{Settings: s, Secret: read}
	}
	k, err := compose.StateKeys(ctx, app(func(s *compose.Settings) {}, nil))
	if err != nil || k == nil {
		t.Fatalf("kept locally: %v, %v", k, err)
	}
	a := app(func(s *compose.Settings) {}, nil)
	k1, _ := compose.StateKeys(ctx, a)
	k2, _ := compose.StateKeys(ctx, a)
	if _, err := k2.Open("p", k1.Seal("p", []byte("x"))); err != nil {
		t.Errorf("the kept key changed between two starts: %v", err)
	}
	if k, err := compose.StateKeys(ctx, app(func(s *compose.Settings) { s.Store = "dynamodb" }, nil)); err != nil || k != nil {
		t.Errorf("dynamodb without keys: %v, %v; want none", k, err)
	}
	bare := strings.Repeat("Ab3dE5gH", 8)
	k, err = compose.StateKeys(ctx, app(func(s *compose.Settings) { s.StateSecretARN = "arn:s" }, func(context.Context, string) (string, error) { return bare, nil }))
	if err != nil || k == nil {
		t.Errorf("from the secret: %v", err)
	}
	if _, err := compose.StateKeys(ctx, app(func(s *compose.Settings) { s.StateSecretARN = "arn:s" }, func(context.Context, string) (string, error) { return "", errors.New("denied") })); err == nil || !strings.Contains(err.Error(), "arn:s") {
		t.Errorf("unreadable secret: %v", err)
	}
	if _, err := compose.StateKeys(ctx, app(func(s *compose.Settings) { s.StateKeys = "k0:short" }, nil)); err == nil || !strings.Contains(err.Error(), "--state-keys") {
		t.Errorf("malformed keys: %v", err)
	}
	if k, err := compose.StateKeys(ctx, app(func(s *compose.Settings) { s.StateKeys = "k9:" + secret; s.Store = "dynamodb" }, nil)); err != nil || k == nil {
		t.Errorf("keyring text: %v", err)
	}
}

// Every boolean setting shares one parser: exactly true or false; 0, 1,
// f, t, FALSE, True, yes and the empty flag value are refused with the
// setting's name, on the laptop and on Lambda, never read as false.
func TestBooleansAreTrueOrFalse(t *testing.T) {
	t.Parallel()
	n := 0
	for _, row := range compose.Table {
		s := compose.Defaults()
		if b, ok := row.Value(&s).(interface{ IsBoolFlag() bool }); !ok || !b.IsBoolFlag() {
			continue
		}
		n++
		for _, scope := range []compose.Scope{compose.Local, compose.Lambda} {
			if !row.In(scope) {
				continue
			}
			for _, v := range []string{"0", "1", "f", "t", "FALSE", "True", "yes", "off"} {
				_, err := compose.FromEnv(env(map[string]string{compose.Env(row.Name): v}), scope)
				if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("$%s=%q: want true or false", compose.Env(row.Name), v)) {
					t.Errorf("%s=%q in scope %v: %v, want it refused naming the variable", compose.Env(row.Name), v, scope, err)
				}
			}
		}
		for v, want := range map[string]string{"true": "true", "false": "false"} {
			if err := row.Value(&s).Set(v); err != nil || row.Value(&s).String() != want {
				t.Errorf("--%s=%s: %v, %s", row.Name, v, err, row.Value(&s).String())
			}
		}
		if err := row.Value(&s).Set(""); err == nil {
			t.Errorf("--%s= (empty) was accepted", row.Name)
		}
	}
	if n < 5 {
		t.Fatalf("%d boolean settings found; the table has at least 5", n)
	}
	if _, err := compose.ParseBool("FALSE"); err == nil {
		t.Error("ParseBool(FALSE) succeeded")
	}
}
