package main

import (
	"bytes"
	"context"
	"runtime/debug"
	"testing"
)

func TestModuleVersion(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		bi   *debug.BuildInfo
		ok   bool
		want string
	}{
		{"go install at a tag", &debug.BuildInfo{Main: debug.Module{Path: "github.com/mcp-elicitation/elicitation", Version: "v1.2.3"}}, true, "v1.2.3"},
		{"a build in a checkout, stamped from git", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261204160000-e277d62aa1b2+dirty"}}, true, "v0.0.0-20261204160000-e277d62aa1b2+dirty"},
		{"a build without version control", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, true, "dev"},
		{"no module version", &debug.BuildInfo{}, true, "dev"},
		{"no build information", nil, false, "dev"},
	} {
		if got := moduleVersion(tc.bi, tc.ok); got != tc.want {
			t.Errorf("%s: moduleVersion = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestVersionCommand(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	if err := run(context.Background(), []string{"version"}, &out, &out, noEnv); err != nil {
		t.Fatal(err)
	}
	if want := "elicitation " + version + "\n"; out.String() != want || version == "" {
		t.Errorf("elicitation version printed %q, want %q", out.String(), want)
	}
}
