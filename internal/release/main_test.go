package main

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	t.Parallel()
	env := func(epoch string) func(string) string {
		return func(k string) string {
			if k == "SOURCE_DATE_EPOCH" {
				return epoch
			}
			return ""
		}
	}
	for _, c := range []struct {
		name    string
		args    []string
		epoch   string
		version string
		targets []Target
		err     string
	}{
		{name: "release", args: []string{"-version", "v1.2.3"}, epoch: "1700000000", version: "v1.2.3", targets: AllTargets},
		{name: "prerelease", args: []string{"-version", "v1.3.0-rc.1", "-targets", "linux/arm64, windows/amd64,linux/arm64"}, epoch: "0",
			version: "v1.3.0-rc.1", targets: []Target{{"linux", "arm64"}, {"windows", "amd64"}}},
		{name: "snapshot", args: []string{"-snapshot"}, epoch: "1", version: "v0.0.0-SNAPSHOT", targets: AllTargets},
		{name: "neither", args: nil, err: "give -version vX.Y.Z for a release, or -snapshot"},
		{name: "no v", args: []string{"-version", "1.2.3"}, err: `version "1.2.3": want vMAJOR.MINOR.PATCH`},
		{name: "build metadata", args: []string{"-version", "v1.2.3+abc"}, err: `version "v1.2.3+abc"`},
		{name: "leading zero", args: []string{"-version", "v01.2.3"}, err: `version "v01.2.3"`},
		{name: "unknown target", args: []string{"-snapshot", "-targets", "linux/386"}, err: `target "linux/386": want one of linux/amd64,`},
		{name: "argument", args: []string{"-snapshot", "dist"}, err: `release takes no arguments, got "dist"`},
		{name: "bad epoch", args: []string{"-snapshot"}, epoch: "yesterday", err: `SOURCE_DATE_EPOCH "yesterday": want seconds since 1970`},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			o, err := parse(c.args, io.Discard, env(c.epoch))
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("parse(%q) = %v, want an error with %q", c.args, err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(o.Version, c.version) || !slices.Equal(o.Targets, c.targets) || o.Out != "dist" {
				t.Errorf("parse(%q) = version %s targets %v out %s, want %s %v dist", c.args, o.Version, o.Targets, o.Out, c.version, c.targets)
			}
			if strconv.FormatInt(o.Epoch.Unix(), 10) != c.epoch || o.Epoch.Location() != time.UTC {
				t.Errorf("epoch %v, want SOURCE_DATE_EPOCH %s in UTC", o.Epoch, c.epoch)
			}
		})
	}
}

// TestBuildRefusesAnOlderRelease: a release never mixes with the files of
// one before it, and nothing is built.
func TestBuildRefusesAnOlderRelease(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	old := filepath.Join(out, "mcp-elicitation_1.0.0_linux_amd64.tar.gz")
	if err := os.WriteFile(old, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Build(t.Context(), Options{Version: "v1.0.1", Out: out, Root: ".", Targets: AllTargets, Log: io.Discard})
	if err == nil || !strings.Contains(err.Error(), "is not empty: remove it first") {
		t.Fatalf("Build into a directory holding a release = %v, want a refusal", err)
	}
	if entries, _ := os.ReadDir(out); len(entries) != 1 {
		t.Errorf("Build left %d files, want only the old one", len(entries))
	}
}

func TestNames(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		t                  Target
		archive, sbom, img string
	}{
		{Target{"linux", "arm64"}, "mcp-elicitation_1.2.3_linux_arm64.tar.gz", "mcp-elicitation_1.2.3_linux_arm64.sbom.cdx.json", "mcp-elicitation_1.2.3_linux_arm64.image.tar"},
		{Target{"windows", "amd64"}, "mcp-elicitation_1.2.3_windows_amd64.zip", "mcp-elicitation_1.2.3_windows_amd64.sbom.cdx.json", "mcp-elicitation_1.2.3_windows_amd64.image.tar"},
	} {
		if a, s, i := Archive("v1.2.3", c.t), SBOM("v1.2.3", c.t), Image("v1.2.3", c.t); a != c.archive || s != c.sbom || i != c.img {
			t.Errorf("%s: %s %s %s, want %s %s %s", c.t, a, s, i, c.archive, c.sbom, c.img)
		}
	}
	if got := ImageRef("v1.2.3-rc.1"); got != "mcp-elicitation:1.2.3-rc.1" {
		t.Errorf("ImageRef = %s", got)
	}
}
