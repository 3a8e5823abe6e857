package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"gopkg.in/yaml.v3"

	"github.com/mcp-elicitation/elicitation/internal/hostconfig"
	"github.com/mcp-elicitation/elicitation/internal/hostconfig/hostconfigtest"
)

// bannerEntries returns the remote server entries (with a "url") of the
// configurations the banner printed, one per line: JSON files, and the
// JSON of "code --add-mcp '…'".
func bannerEntries(t *testing.T, banner string) []map[string]any {
	t.Helper()
	var entries []map[string]any
	for _, line := range strings.Split(banner, "\n") {
		line = strings.TrimPrefix(line, "    ")
		if j, ok := strings.CutPrefix(line, "code --add-mcp '"); ok {
			line = strings.TrimSuffix(j, "'")
		}
		if !strings.HasPrefix(line, "{") {
			continue
		}
		var doc map[string]any
		if err := json.Unmarshal([]byte(line), &doc); err != nil {
			t.Fatalf("banner JSON does not parse: %v\n%s", err, line)
		}
		for _, key := range []string{"mcpServers", "servers"} {
			if m, ok := doc[key].(map[string]any); ok {
				for _, e := range m {
					doc = e.(map[string]any)
				}
			}
		}
		if doc["url"] != nil {
			entries = append(entries, doc)
		}
	}
	if len(entries) < 2 {
		t.Fatalf("banner prints %d remote configurations, want Cursor's and VS Code's:\n%s", len(entries), banner)
	}
	return entries
}

// headerClient sends the configured headers, with the host's variable
// references replaced by key, as the host would.
type headerClient struct {
	headers map[string]string
	rt      http.RoundTripper
}

func (h headerClient) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.headers {
		r.Header.Set(k, v)
	}
	return h.rt.RoundTrip(r)
}

func connectAs(t *testing.T, e map[string]any, key string) (*mcp.ClientSession, error) {
	headers := map[string]string{}
	if h, ok := e["headers"].(map[string]any); ok {
		for k, v := range h {
			s := v.(string)
			for _, ref := range []string{"${" + hostconfig.KeyVariable + "}", "${env:" + hostconfig.KeyVariable + "}", "${input:elicitation-api-key}"} {
				s = strings.ReplaceAll(s, ref, key)
			}
			headers[k] = s
		}
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil)
	s, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: e["url"].(string), HTTPClient: &http.Client{Transport: headerClient{headers, http.DefaultTransport}}}, nil)
	if err == nil {
		t.Cleanup(func() { _ = s.Close() })
	}
	return s, err
}

// With --require-api-key the banner's configurations carry the
// Authorization header, and with a real key they connect.
func TestBannerWithAPIKeys(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	if err := run(context.Background(), []string{"keys", "--data-dir", dir, "create", "--principal", "alice", "--json"}, &out, io.Discard, noEnv); err != nil {
		t.Fatal(err)
	}
	var k struct{ Key string }
	if err := json.Unmarshal(out.Bytes(), &k); err != nil || k.Key == "" {
		t.Fatalf("keys create: %v %s", err, out.String())
	}
	m := start(t, "--data-dir", dir, "--require-api-key")
	var banner bytes.Buffer
	m.PrintWelcome(&banner)
	b := banner.String()
	for _, want := range []string{
		`claude mcp add --transport http elicitation ` + m.MCPURL + ` --header "Authorization: Bearer $ELICITATION_API_KEY"`,
		"API keys are required",
		"  Claude Code, Cursor, MCP Inspector: read $ELICITATION_API_KEY (set it where the host starts)\n",
	} {
		if !strings.Contains(b, want) {
			t.Errorf("banner lacks %q:\n%s", want, b)
		}
	}
	for _, h := range hostconfig.Hosts() {
		if !strings.Contains(b, "  "+h.Title) {
			t.Errorf("banner has nothing for %s", h.Title)
		}
	}
	if strings.Contains(b, "No API keys") {
		t.Errorf("banner of a keyed server says there are no keys:\n%s", b)
	}
	runPointers(t, b, m.MCPURL)
	for _, e := range bannerEntries(t, b) {
		if e["headers"] == nil {
			t.Fatalf("a configuration without the Authorization header: %v", e)
		}
		s, err := connectAs(t, e, k.Key)
		if err != nil {
			t.Fatalf("the banner's configuration does not connect: %v\n%v", err, e)
		}
		if _, err := s.ListTools(context.Background(), nil); err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		if _, err := connectAs(t, e, "elk_wrong"); err == nil {
			t.Fatalf("a wrong key connected")
		}
	}
}

// Without keys the banner says what that means, and it is true: another
// client, with nothing but the id, cancels a request it did not create.
func TestBannerWithoutKeys(t *testing.T) {
	m := start(t, "--data-dir", t.TempDir())
	var banner bytes.Buffer
	m.PrintWelcome(&banner)
	b := banner.String()
	if !strings.Contains(b, "No API keys: any program that can reach this endpoint may create requests, and read,\nwait on or cancel any request whose id it knows") {
		t.Errorf("keyless banner does not say who may read or cancel requests:\n%s", b)
	}
	if strings.Contains(b, "Authorization") {
		t.Errorf("keyless banner prints an Authorization header:\n%s", b)
	}
	runPointers(t, b, m.MCPURL)
	entries := bannerEntries(t, b)
	owner, err := connectAs(t, entries[0], "")
	if err != nil {
		t.Fatal(err)
	}
	stranger, err := connectAs(t, entries[1], "")
	if err != nil {
		t.Fatal(err)
	}
	id := call(t, owner, "elicit_approval", map[string]any{"message": "Ship?", "context": 1})["elicitationId"].(string)
	if st := call(t, stranger, "elicit_cancel", map[string]any{"elicitationId": id}); st["status"] != "canceled" {
		t.Fatalf("stranger's cancel: %v", st)
	}
}

// runPointers runs the banner's commands as printed (go run
// ./cmd/elicitation is this program): "keys create" makes a key this
// server takes, and "connect … HOST" prints each host's configuration with
// the server's URL, and the Authorization header when it needs a key.
func runPointers(t *testing.T, banner, mcpURL string) {
	t.Helper()
	const prog = "go run ./cmd/elicitation "
	keyed := strings.Contains(banner, "API keys are required")
	var create, connect []string
	for _, line := range strings.Split(banner, "\n") {
		line = strings.TrimSpace(line)
		if i := strings.Index(line, prog); i >= 0 {
			cmd, _, _ := strings.Cut(line[i+len(prog):], `"`)
			words := strings.Fields(cmd)
			switch words[0] {
			case "keys":
				create = words
			case "connect":
				connect = words[:len(words)-1] // … HOST
			}
		}
	}
	if connect == nil || keyed != (create != nil) {
		t.Fatalf("banner lacks its pointers (connect %q, keys create %q):\n%s", connect, create, banner)
	}
	if create != nil {
		if create[len(create)-1] != "NAME" {
			t.Fatalf("keys create pointer %q", create)
		}
		create[len(create)-1] = "carol"
		var out bytes.Buffer
		if err := run(context.Background(), append(create, "--json"), &out, io.Discard, noEnv); err != nil {
			t.Fatalf("%q as printed: %v", create, err)
		}
		var k struct{ Key string }
		if err := json.Unmarshal(out.Bytes(), &k); err != nil {
			t.Fatal(err)
		}
		if s, err := connectAs(t, map[string]any{"url": mcpURL, "headers": map[string]any{"Authorization": "Bearer " + k.Key}}, ""); err != nil {
			t.Fatalf("the key from the banner's keys create does not connect: %v", err)
		} else if _, err := s.ListTools(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, h := range hostconfig.Hosts() {
		var out bytes.Buffer
		if err := run(context.Background(), append(connect, h.Name), &out, io.Discard, noEnv); err != nil {
			t.Fatalf("%q %s as printed: %v", connect, h.Name, err)
		}
		if !strings.Contains(out.String(), mcpURL) || strings.Contains(out.String(), "Authorization") != keyed {
			t.Errorf("%q %s printed (keyed %v):\n%s", connect, h.Name, keyed, out.String())
		}
	}
}

func TestConnect(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		env     map[string]string
		want    []string
		host    string
		keyless bool
	}{
		{args: []string{"vscode"}, host: "vscode", want: []string{`"url": "http://127.0.0.1:8080/mcp"`}, keyless: true},
		{args: []string{"cursor"}, env: map[string]string{"ELICITATION_ADDR": "127.0.0.1:26001", "ELICITATION_REQUIRE_API_KEY": "true"}, host: "cursor", want: []string{`"url": "http://127.0.0.1:26001/mcp"`, `"Authorization": "Bearer ${env:ELICITATION_API_KEY}"`}},
		{args: []string{"--url", "https://a1b2c3.execute-api.eu-west-1.amazonaws.com/mcp", "claude-desktop"}, host: "claude-desktop", want: []string{`"mcp-remote"`, `"Authorization:${ELICITATION_AUTH}"`}},
		{args: []string{"--url", "https://example.test/mcp", "--require-api-key=false", "goose"}, host: "goose", want: []string{"uri: https://example.test/mcp"}, keyless: true},
		{args: []string{"claude-code"}, host: "claude-code", want: []string{`"type": "http"`, `"url": "http://127.0.0.1:8080/mcp"`}, keyless: true},
		{args: []string{"--url", "http://[::1]:26001/mcp", "--require-api-key", "claude-desktop"}, host: "claude-desktop", want: []string{`"http://[::1]:26001/mcp"`, `"--allow-http"`, `"Authorization:${ELICITATION_AUTH}"`}},
		{args: []string{"vscode"}, env: map[string]string{"ELICITATION_ADDR": ":26002"}, host: "vscode", want: []string{`"url": "http://127.0.0.1:26002/mcp"`}, keyless: true},
		{args: []string{"--require-api-key", "goose"}, host: "goose", want: []string{"uri: http://127.0.0.1:8080/mcp", "Authorization: Bearer elk_…"}},
	} {
		var stdout, stderr bytes.Buffer
		getenv := func(k string) string { return tc.env[k] }
		if err := run(context.Background(), append([]string{"connect"}, tc.args...), &stdout, &stderr, getenv); err != nil {
			t.Fatalf("connect %v: %v (%s)", tc.args, err, stderr.String())
		}
		got := stdout.String()
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("connect %v: stdout lacks %q:\n%s", tc.args, w, got)
			}
		}
		if tc.keyless == strings.Contains(got, "Authorization") {
			t.Errorf("connect %v: Authorization present=%v:\n%s", tc.args, !tc.keyless, got)
		}
		if tc.host != "" {
			doc, err := parseSnippet(got)
			if err != nil {
				t.Fatalf("connect %v: stdout is not one configuration: %v\n%s", tc.args, err, got)
			}
			if err := hostconfigtest.Validate(tc.host, doc); err != nil {
				t.Errorf("connect %v: %v", tc.args, err)
			}
		}
	}
	// "connect claude-code > .mcp.json": the JSON on stdout, the command
	// on stderr.
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"connect", "--require-api-key", "claude-code"}, &stdout, &stderr, noEnv); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr.String(), `claude mcp add --transport http elicitation http://127.0.0.1:8080/mcp --header "Authorization: Bearer $ELICITATION_API_KEY"`) ||
		!strings.Contains(stderr.String(), "Claude Code reads it from $ELICITATION_API_KEY") || strings.Contains(stdout.String(), "claude mcp add") ||
		!strings.Contains(stderr.String(), "keys create --principal NAME, with the server's store flags if it has any: --data-dir D") {
		t.Errorf("connect claude-code: stdout\n%s\nstderr\n%s", stdout.String(), stderr.String())
	}
	stderr.Reset()
	if err := run(context.Background(), []string{"connect", "emacs"}, io.Discard, &stderr, noEnv); err == nil || !strings.Contains(err.Error(), `unknown host "emacs"`) {
		t.Errorf("connect emacs: %v", err)
	}
	if err := run(context.Background(), []string{"connect", "--url", "127.0.0.1:8080", "cursor"}, io.Discard, &stderr, noEnv); err == nil {
		t.Errorf("connect with a URL without scheme: no error")
	}
	// Without a HOST: the usage, which says what goes where.
	stderr.Reset()
	if err := run(context.Background(), []string{"connect"}, io.Discard, &stderr, noEnv); err == nil ||
		!strings.Contains(stderr.String(), "usage: elicitation connect [flags] HOST\n") ||
		!strings.Contains(stderr.String(), "The configuration goes to stdout, and where to put it to stderr.") {
		t.Errorf("connect without a HOST: %v\n%s", err, stderr.String())
	}
	var all bytes.Buffer
	if err := run(context.Background(), []string{"connect", "all"}, &all, io.Discard, noEnv); err != nil {
		t.Fatal(err)
	}
	for _, h := range hostconfig.Hosts() {
		if !strings.Contains(all.String(), "# "+h.Title+":") {
			t.Errorf("connect all lacks %s", h.Title)
		}
	}
}

func parseSnippet(s string) (any, error) {
	var doc any
	if strings.HasPrefix(strings.TrimSpace(s), "{") {
		return doc, json.Unmarshal([]byte(s), &doc)
	}
	return doc, yaml.Unmarshal([]byte(s), &doc)
}

// A server on every interface is connected to on loopback.
func TestBannerOnAllInterfaces(t *testing.T) {
	for in, want := range map[string]string{
		"http://[::]:8080/mcp":           "http://127.0.0.1:8080/mcp",
		"http://0.0.0.0:8080/mcp":        "http://127.0.0.1:8080/mcp",
		"http://:8080/mcp":               "http://127.0.0.1:8080/mcp",
		"http://192.168.1.20:8080/mcp":   "http://192.168.1.20:8080/mcp",
		"http://127.0.0.1:8080/mcp":      "http://127.0.0.1:8080/mcp",
		"http://[2001:db8::1]:26001/mcp": "http://[2001:db8::1]:26001/mcp",
	} {
		if got := dialable(in); got != want {
			t.Errorf("dialable(%s) = %s, want %s", in, got, want)
		}
	}
	m := start(t, "--data-dir", t.TempDir(), "--addr", ":0")
	var banner bytes.Buffer
	m.PrintWelcome(&banner)
	for _, e := range bannerEntries(t, banner.String()) {
		if _, err := connectAs(t, e, ""); err != nil {
			t.Fatalf("the banner's configuration does not connect: %v\n%v", err, e)
		}
	}
}
