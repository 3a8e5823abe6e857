package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestDuplicateKeysLastWins: a key given twice in the original's sections
// is read as PyYAML reads it, the last one winning, with a warning naming
// both lines; --strict-config refuses it.
func TestDuplicateKeysLastWins(t *testing.T) {
	t.Parallel()
	doc := `upstream:
  command: node
  command: npx
  args: [a]
  env:
    A: first
    A: second
tools:
  echo:
    required: [x]
  echo:
    required: [y]
proxy:
  name: one
proxy:
  name: two
`
	cfg, err := Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Upstream.Command != "npx" || cfg.Upstream.Env["A"] != "second" || cfg.Proxy.Name != "two" || !reflect.DeepEqual(cfg.Tools["echo"].Required, []string{"y"}) {
		t.Errorf("the last of each duplicate is not the one used: command %q, env %v, name %q, echo %v", cfg.Upstream.Command, cfg.Upstream.Env, cfg.Proxy.Name, cfg.Tools["echo"].Required)
	}
	want := []string{
		"2: upstream.command: duplicate key, ignored: the one at line 3 is used (the last one wins, as with the original)",
		"6: upstream.env.A: duplicate key, ignored: the one at line 7 is used (the last one wins, as with the original)",
		"9: tools.echo: duplicate key, ignored: the one at line 11 is used (the last one wins, as with the original)",
		"13: proxy: duplicate key, ignored: the one at line 15 is used (the last one wins, as with the original)",
	}
	var got []string
	for _, w := range cfg.Warnings {
		got = append(got, w.Error())
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("warnings:\n got %q\nwant %q", got, want)
	}
	// The first of a duplicate is not read at all (PyYAML never sees it),
	// so a mistake in it is not refused.
	cfg, err = Parse([]byte("upstream:\n  url: 12\n  url: http://127.0.0.1:1/mcp\n"))
	if err != nil || cfg.Upstream.URL != "http://127.0.0.1:1/mcp" || len(cfg.Warnings) != 1 {
		t.Errorf("a bad value shadowed by a good one: %v %v", err, cfg)
	}
	if _, err := ParseWith([]byte(doc), Options{Strict: true}); err == nil || err.Error() != "2: upstream.command: duplicate key, ignored: the one at line 3 is used (the last one wins, as with the original) (refused by --strict-config)" {
		t.Errorf("strict: %v", err)
	}
}

// TestEmptyCommandKeysWithURL: args: [] and env: {} beside upstream.url
// (the original ignores them) load with a warning naming their line; a
// non-empty one is still refused (TestParseErrors).
func TestEmptyCommandKeysWithURL(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(path, []byte("upstream:\n  url: http://127.0.0.1:1/mcp\n  args: []\n  env: {}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Upstream.URL != "http://127.0.0.1:1/mcp" || cfg.Upstream.Command != "" || len(cfg.Upstream.Args) != 0 || cfg.Upstream.Env != nil {
		t.Errorf("upstream %+v", cfg.Upstream)
	}
	want := []string{
		path + ":3: upstream.args: is empty and ignored: it is only used with upstream.command",
		path + ":4: upstream.env: is empty and ignored: it is only used with upstream.command",
	}
	var got []string
	for _, w := range cfg.Warnings {
		got = append(got, w.Error())
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("warnings:\n got %q\nwant %q", got, want)
	}
	if _, err := LoadWith(path, Options{Strict: true}); err == nil || !strings.Contains(err.Error(), "upstream.args: is empty and ignored") {
		t.Errorf("strict: %v", err)
	}
	for doc, want := range map[string]string{
		"upstream:\n  url: http://h/mcp\n  args: x\n":            "3: upstream.args: must be a list, not a string",
		"upstream:\n  url: http://h/mcp\n  inherit_env: false\n": "3: upstream.inherit_env: is only valid with upstream.command",
	} {
		if _, err := Parse([]byte(doc)); err == nil || err.Error() != want {
			t.Errorf("%q: %v, want %q", doc, err, want)
		}
	}
}
