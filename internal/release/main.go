// Command release builds what a user installs without a Go toolchain: for
// each target (GOOS/GOARCH) an archive holding elicitation and
// mcp-elicitation-proxy and a CycloneDX SBOM of the modules linked into
// them; for each linux target a container image of the local server, built
// without a Docker daemon (a docker-save tarball that docker load, podman
// load and crane push read), and all of them in one OCI image layout under
// a multi-platform index (skopeo copy --all pushes it); and checksums.txt,
// the SHA-256 of every file.
//
//	go run ./internal/release -snapshot -out dist               every target, version v0.0.0-SNAPSHOT-<commit>
//	go run ./internal/release -version v1.2.3 -out dist         a release
//	go run ./internal/release -snapshot -targets linux/amd64 -out dist
//
// Run it from the module root (make release and make release-snapshot do).
// The binaries are built with CGO_ENABLED=0 and -trimpath, the version
// stamped with -ldflags -X main.version; file times are SOURCE_DATE_EPOCH,
// else the commit's time, so two runs over one commit write the same bytes.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "release:", err)
		}
		os.Exit(2)
	}
}

// Target is one platform a release is built for.
type Target struct{ OS, Arch string }

func (t Target) String() string { return t.OS + "/" + t.Arch }

// AllTargets are the platforms of a release.
var AllTargets = []Target{
	{"linux", "amd64"}, {"linux", "arm64"},
	{"darwin", "amd64"}, {"darwin", "arm64"},
	{"windows", "amd64"}, {"windows", "arm64"},
}

// Options is one run of the release.
type Options struct {
	// Version is stamped into the binaries (v1.2.3); the file names carry
	// it without the "v".
	Version string
	// Out is the directory the artifacts are written to: absent or empty.
	Out string
	// Root is the module root, the directory built from.
	Root    string
	Targets []Target
	// Epoch is the time every file and the image carry.
	Epoch time.Time
	// Log receives one line per step.
	Log io.Writer
}

// Project is the name of the archives and the image.
const Project = "mcp-elicitation"

// Commands are the packages every archive holds, built in one go build.
var Commands = []string{"./cmd/elicitation", "./cmd/mcp-elicitation-proxy"}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parse(args, stderr, os.Getenv)
	if err != nil {
		return err
	}
	files, err := Build(ctx, o)
	if err != nil {
		return err
	}
	for _, f := range files {
		fmt.Fprintln(stdout, filepath.Join(o.Out, f))
	}
	return nil
}

func parse(args []string, stderr io.Writer, getenv func(string) string) (Options, error) {
	fs := flag.NewFlagSet("release", flag.ContinueOnError)
	fs.SetOutput(stderr)
	version := fs.String("version", "", "the version to stamp and name the files with (vMAJOR.MINOR.PATCH[-PRERELEASE])")
	snapshot := fs.Bool("snapshot", false, "a snapshot: version v0.0.0-SNAPSHOT-<commit> unless -version")
	out := fs.String("out", "dist", "directory to write the artifacts to (absent or empty)")
	targets := fs.String("targets", "", "comma-separated GOOS/GOARCH list (default: "+targetList(AllTargets)+")")
	if err := fs.Parse(args); err != nil {
		return Options{}, err
	}
	if fs.NArg() > 0 {
		return Options{}, fmt.Errorf("release takes no arguments, got %q", strings.Join(fs.Args(), " "))
	}
	o := Options{Version: *version, Out: *out, Root: ".", Targets: AllTargets, Log: stderr}
	if o.Version == "" && !*snapshot {
		return Options{}, errors.New("give -version vX.Y.Z for a release, or -snapshot")
	}
	if o.Version == "" {
		o.Version = snapshotVersion()
	}
	if err := checkVersion(o.Version); err != nil {
		return Options{}, err
	}
	if *targets != "" {
		var err error
		if o.Targets, err = parseTargets(*targets); err != nil {
			return Options{}, err
		}
	}
	var err error
	o.Epoch, err = epoch(getenv)
	return o, err
}

var versionRE = regexp.MustCompile(`^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?$`)

func checkVersion(v string) error {
	if !versionRE.MatchString(v) {
		return fmt.Errorf("version %q: want vMAJOR.MINOR.PATCH with an optional -PRERELEASE (v1.2.3, v1.3.0-rc.1)", v)
	}
	return nil
}

// snapshotVersion names a build of the commit checked out.
func snapshotVersion() string {
	if c, err := git("rev-parse", "--short=12", "HEAD"); err == nil && c != "" {
		return "v0.0.0-SNAPSHOT-" + c
	}
	return "v0.0.0-SNAPSHOT"
}

func parseTargets(list string) ([]Target, error) {
	var ts []Target
	for _, s := range strings.Split(list, ",") {
		os, arch, _ := strings.Cut(strings.TrimSpace(s), "/")
		t := Target{os, arch}
		if !slices.Contains(AllTargets, t) {
			return nil, fmt.Errorf("target %q: want one of %s", s, targetList(AllTargets))
		}
		if !slices.Contains(ts, t) {
			ts = append(ts, t)
		}
	}
	return ts, nil
}

func targetList(ts []Target) string {
	s := make([]string, len(ts))
	for i, t := range ts {
		s[i] = t.String()
	}
	return strings.Join(s, ",")
}

// epoch is SOURCE_DATE_EPOCH, else the time of the commit checked out,
// else the Unix epoch.
func epoch(getenv func(string) string) (time.Time, error) {
	if v := getenv("SOURCE_DATE_EPOCH"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH %q: want seconds since 1970", v)
		}
		return time.Unix(n, 0).UTC(), nil
	}
	if v, err := git("log", "-1", "--format=%ct"); err == nil {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			return time.Unix(n, 0).UTC(), nil
		}
	}
	return time.Unix(0, 0).UTC(), nil
}
