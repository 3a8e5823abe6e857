package main

import (
	"archive/tar"
	"archive/zip"
	"bufio"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	cdx "github.com/CycloneDX/cyclonedx-go"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/testenv"
)

const testVersion = "v0.0.0-test.1"

var testEpoch = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// TestReleaseSnapshot builds the release for this machine's platform (and
// linux on its architecture, for the image) the way make release-snapshot
// builds every platform, then checks what a user gets: the checksums, the
// SBOM, the archive's binaries with their version, the image's
// configuration, and the image's binary serving /healthz and MCP
// tools/list on the address and data directory the image gives it. A
// second build writes the same bytes.
func TestReleaseSnapshot(t *testing.T) {
	testenv.Slow(t, "release build")
	host := Target{runtime.GOOS, runtime.GOARCH}
	linux := Target{"linux", runtime.GOARCH}
	if !slices.Contains(AllTargets, host) {
		t.Fatalf("this machine's platform %s is not a release target (%s)", host, targetList(AllTargets))
	}
	targets := []Target{host}
	if host != linux {
		targets = append(targets, linux)
	}
	o := Options{Version: testVersion, Out: filepath.Join(t.TempDir(), "dist"), Root: testenv.Root(t), Targets: targets, Epoch: testEpoch, Log: io.Discard}
	tool := buildReleaseTool(t, o.Root)
	files := runReleaseTool(t, tool, o)
	var want []string
	for _, tg := range targets {
		want = append(want, Archive(testVersion, tg), SBOM(testVersion, tg))
		if tg.OS == "linux" {
			want = append(want, Image(testVersion, tg))
		}
	}
	if want = append(want, OCIArchive(testVersion), Checksums); !slices.Equal(files, want) {
		t.Fatalf("Build wrote %q, want %q", files, want)
	}
	sums := checkChecksums(t, o.Out)

	t.Run("sbom", func(t *testing.T) { checkSBOM(t, o.Root, filepath.Join(o.Out, SBOM(testVersion, host)), host) })
	t.Run("archive", func(t *testing.T) { checkArchive(t, filepath.Join(o.Out, Archive(testVersion, host)), host) })
	t.Run("image", func(t *testing.T) { checkImage(t, filepath.Join(o.Out, Image(testVersion, linux)), linux) })
	t.Run("oci", func(t *testing.T) {
		checkOCIArchive(t, filepath.Join(o.Out, OCIArchive(testVersion)), filepath.Join(o.Out, Image(testVersion, linux)), linux)
	})
	t.Run("reproducible", func(t *testing.T) {
		again := o
		again.Out = filepath.Join(t.TempDir(), "dist")
		runReleaseTool(t, tool, again)
		if got := checkChecksums(t, again.Out); got != sums {
			t.Errorf("a second build of the same commit wrote other bytes:\n%s\nthe first:\n%s", got, sums)
		}
	})
}

// buildReleaseTool builds this command without the race detector: under
// -race the archives' gzip alone took most of ten minutes on a busy CI
// machine, and what the test checks is the files the tool writes.
func buildReleaseTool(t *testing.T, root string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "release")
	cmd := exec.CommandContext(t.Context(), "go", "build", "-o", bin, "./internal/release")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./internal/release: %v\n%s", err, out)
	}
	return bin
}

// runReleaseTool runs the release tool as make release does, for o's
// version, targets, output directory and epoch, and returns the files it
// wrote in the order it reports them.
func runReleaseTool(t *testing.T, tool string, o Options) []string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), tool, "-version", o.Version, "-targets", targetList(o.Targets), "-out", o.Out)
	cmd.Dir = o.Root
	cmd.Env = append(os.Environ(), "SOURCE_DATE_EPOCH="+strconv.FormatInt(o.Epoch.Unix(), 10))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("release %s: %v\n%s", o.Version, err, stderr.String())
	}
	var files []string
	for _, path := range strings.Fields(string(out)) {
		files = append(files, filepath.Base(path))
	}
	return files
}

// checkChecksums checks that checksums.txt names every other file of dir
// once, with its SHA-256, and returns it.
func checkChecksums(t *testing.T, dir string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, Checksums))
	if err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var listed, present []string
	for line := range strings.Lines(string(raw)) {
		sum, file, ok := strings.Cut(strings.TrimSuffix(line, "\n"), "  ")
		if !ok || len(sum) != 64 {
			t.Fatalf("checksums.txt line %q: want \"<sha256>  <file>\"", line)
		}
		if got, err := sha256File(filepath.Join(dir, file)); err != nil || got != sum {
			t.Errorf("%s: checksums.txt says %s, the file's SHA-256 is %s (%v)", file, sum, got, err)
		}
		listed = append(listed, file)
	}
	for _, e := range entries {
		if e.Name() != Checksums {
			present = append(present, e.Name())
		}
	}
	if !slices.Equal(listed, present) {
		t.Errorf("checksums.txt lists %q; the directory holds %q", listed, present)
	}
	return string(raw)
}

// checkSBOM checks the SBOM against the module: both binaries, the
// standard library of this toolchain, and the modules with their go.sum
// hashes; the proxy does not link the AWS SDK, so its modules are not
// among the proxy's dependencies.
func checkSBOM(t *testing.T, root, path string, tg Target) {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var bom cdx.BOM
	if err := cdx.NewBOMDecoder(f, cdx.BOMFileFormatJSON).Decode(&bom); err != nil {
		t.Fatalf("decoding the SBOM: %v", err)
	}
	if bom.SpecVersion != cdx.SpecVersion1_6 || bom.Metadata == nil || bom.Metadata.Component == nil || bom.Components == nil || bom.Dependencies == nil {
		t.Fatalf("SBOM: spec %v, want 1.6 with metadata, components and dependencies", bom.SpecVersion)
	}
	if c := bom.Metadata.Component; c.Name != Project || c.Version != testVersion || c.Type != cdx.ComponentTypeApplication {
		t.Errorf("SBOM subject is %s %s (%s), want %s %s", c.Name, c.Version, c.Type, Project, testVersion)
	}
	if bom.Metadata.Timestamp != testEpoch.Format(time.RFC3339) {
		t.Errorf("SBOM timestamp %s, want the source date %s", bom.Metadata.Timestamp, testEpoch.Format(time.RFC3339))
	}
	byRef := map[string]cdx.Component{}
	for _, c := range *bom.Components {
		byRef[c.BOMRef] = c
	}
	deps := map[string][]string{}
	for _, d := range *bom.Dependencies {
		if d.Dependencies != nil {
			deps[d.Ref] = *d.Dependencies
		}
	}
	elicitation := purl("github.com/mcp-elicitation/elicitation/cmd/elicitation", testVersion, tg)
	proxy := purl("github.com/mcp-elicitation/elicitation/cmd/mcp-elicitation-proxy", testVersion, tg)
	if got := deps[bom.Metadata.Component.BOMRef]; !slices.Equal(got, []string{elicitation, proxy}) {
		t.Errorf("the release depends on %q, want the two binaries", got)
	}
	std := purl("std", runtime.Version(), tg)
	if _, ok := byRef[std]; !ok || !slices.Contains(deps[elicitation], std) {
		t.Errorf("the standard library %s is not a component the server depends on", std)
	}
	version, sum := required(t, root, "github.com/modelcontextprotocol/go-sdk")
	sdk := purl("github.com/modelcontextprotocol/go-sdk", version, tg)
	c, ok := byRef[sdk]
	if !ok || !slices.Contains(deps[elicitation], sdk) || !slices.Contains(deps[proxy], sdk) {
		t.Fatalf("%s is not a component both binaries depend on", sdk)
	}
	raw, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(sum, "h1:"))
	if c.Hashes == nil || len(*c.Hashes) != 1 || (*c.Hashes)[0].Value != hex.EncodeToString(raw) {
		t.Errorf("%s: hashes %v, want the SHA-256 of go.sum's %s", sdk, c.Hashes, sum)
	}
	if slices.ContainsFunc(*bom.Components, func(c cdx.Component) bool { return c.Name == "github.com/CycloneDX/cyclonedx-go" }) {
		t.Error("the SBOM lists cyclonedx-go, which only the release tool links")
	}
	if !slices.ContainsFunc(deps[elicitation], isAWS) || slices.ContainsFunc(deps[proxy], isAWS) {
		t.Errorf("the AWS SDK should be a dependency of the server only: server %v, proxy %v", slices.ContainsFunc(deps[elicitation], isAWS), slices.ContainsFunc(deps[proxy], isAWS))
	}
}

// required returns the version go.mod requires of module and its go.sum
// hash.
func required(t *testing.T, root, module string) (version, sum string) {
	t.Helper()
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	sums, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(mod)) {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == module {
			version = f[1]
		}
	}
	for line := range strings.Lines(string(sums)) {
		if f := strings.Fields(line); len(f) == 3 && f[0] == module && f[1] == version {
			sum = f[2]
		}
	}
	if version == "" || sum == "" {
		t.Fatalf("go.mod and go.sum: no version and hash of %s", module)
	}
	return version, sum
}

func isAWS(ref string) bool {
	return strings.HasPrefix(ref, "pkg:golang/github.com/aws/aws-sdk-go-v2@")
}

// checkArchive unpacks the archive and runs its binaries' version commands.
func checkArchive(t *testing.T, path string, tg Target) {
	dir := t.TempDir()
	names := unpack(t, path, dir)
	base := Base(testVersion, tg)
	exe := ""
	if tg.OS == "windows" {
		exe = ".exe"
	}
	want := []string{base + "/", base + "/elicitation" + exe, base + "/mcp-elicitation-proxy" + exe, base + "/README.md"}
	if !slices.Equal(names, want) {
		t.Fatalf("%s holds %q, want %q", filepath.Base(path), names, want)
	}
	for _, c := range []struct{ bin, flag, want string }{
		{"elicitation", "version", "elicitation " + testVersion},
		{"mcp-elicitation-proxy", "--version", testVersion},
	} {
		out, err := exec.Command(filepath.Join(dir, base, c.bin+exe), c.flag).CombinedOutput()
		if err != nil || !strings.Contains(string(out), c.want) {
			t.Errorf("%s %s: %v %q, want %q", c.bin, c.flag, err, out, c.want)
		}
	}
}

// unpack extracts a .tar.gz or .zip archive into dir and returns its
// entries' names in order.
func unpack(t *testing.T, path, dir string) []string {
	t.Helper()
	var names []string
	write := func(name string, mode os.FileMode, r io.Reader) {
		names = append(names, name)
		dst := filepath.Join(dir, filepath.FromSlash(name))
		if strings.HasSuffix(name, "/") {
			if err := os.MkdirAll(dst, 0o755); err != nil {
				t.Fatal(err)
			}
			return
		}
		data, err := io.ReadAll(r)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, data, mode.Perm()); err != nil {
			t.Fatal(err)
		}
	}
	if strings.HasSuffix(path, ".zip") {
		zr, err := zip.OpenReader(path)
		if err != nil {
			t.Fatal(err)
		}
		defer zr.Close()
		for _, f := range zr.File {
			rc, err := f.Open()
			if err != nil {
				t.Fatal(err)
			}
			write(f.Name, f.Mode(), rc)
			rc.Close()
		}
		return names
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return names
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.ModTime.Unix() != testEpoch.Unix() {
			t.Errorf("%s: time %v, want the source date %v", h.Name, h.ModTime, testEpoch)
		}
		write(h.Name, h.FileInfo().Mode(), tr)
	}
}

// checkImage reads the image tarball as docker load would, checks its
// configuration and files, and (on linux, on the image's architecture)
// starts its binary the way its configuration says.
func checkImage(t *testing.T, path string, tg Target) {
	m, err := tarball.LoadManifest(func() (io.ReadCloser, error) { return os.Open(path) })
	if err != nil {
		t.Fatal(err)
	}
	if len(m) != 1 || !slices.Equal(m[0].RepoTags, []string{ImageRef(testVersion)}) {
		t.Fatalf("image tarball manifest %+v, want one image tagged %s", m, ImageRef(testVersion))
	}
	img, err := tarball.ImageFromPath(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	c := cf.Config
	if cf.OS != "linux" || cf.Architecture != tg.Arch || !cf.Created.Equal(testEpoch) {
		t.Errorf("image platform %s/%s created %v, want %s created %v", cf.OS, cf.Architecture, cf.Created, tg, testEpoch)
	}
	uid, gid, _ := strings.Cut(c.User, ":")
	if u, err := strconv.Atoi(uid); err != nil || u == 0 {
		t.Errorf("image user %q, want a numeric user that is not root", c.User)
	}
	if g, err := strconv.Atoi(gid); err != nil || g == 0 {
		t.Errorf("image user %q, want a numeric group that is not root", c.User)
	}
	if _, ok := c.Volumes[ImageDataDir]; !ok || len(c.Volumes) != 1 {
		t.Errorf("image volumes %v, want %s", c.Volumes, ImageDataDir)
	}
	if _, ok := c.ExposedPorts[ImagePort+"/tcp"]; !ok || len(c.ExposedPorts) != 1 {
		t.Errorf("image ports %v, want %s/tcp", c.ExposedPorts, ImagePort)
	}
	if !slices.Equal(c.Entrypoint, []string{ImageBinary}) || !slices.Equal(c.Cmd, []string{"serve"}) {
		t.Errorf("image runs %q %q, want [%s] [serve]", c.Entrypoint, c.Cmd, ImageBinary)
	}
	env := envMap(c.Env)
	if env["ELICITATION_ADDR"] != "0.0.0.0:"+ImagePort || env["ELICITATION_DATA_DIR"] != ImageDataDir {
		t.Errorf("image environment %q: want the server on 0.0.0.0:%s with its data in %s", c.Env, ImagePort, ImageDataDir)
	}
	if h := c.Healthcheck; h == nil || !slices.Equal(h.Test, []string{"CMD", ImageBinary, "health"}) || h.Interval <= 0 || h.Timeout <= 0 || h.Retries <= 0 {
		t.Errorf("image health check %+v, want CMD %s health with an interval, a timeout and retries", h, ImageBinary)
	}
	binary := checkImageFiles(t, img, c.User)
	if runtime.GOOS != "linux" || runtime.GOARCH != tg.Arch {
		t.Fatalf("the image's %s binary cannot run on %s/%s", tg, runtime.GOOS, runtime.GOARCH)
	}
	serveImage(t, binary, c.Entrypoint, c.Cmd, c.Healthcheck.Test, env)
}

// checkImageFiles checks the image's files (the binary, the data
// directory owned by user, the account files naming it) and returns the
// binary, extracted.
func checkImageFiles(t *testing.T, img v1.Image, user string) string {
	t.Helper()
	uid, gid, _ := strings.Cut(user, ":")
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	binary := filepath.Join(t.TempDir(), "elicitation")
	seen := map[string]*tar.Header{}
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		seen[strings.TrimSuffix(h.Name, "/")] = h
		var data []byte
		if h.Typeflag == tar.TypeReg {
			if data, err = io.ReadAll(tr); err != nil {
				t.Fatal(err)
			}
		}
		switch h.Name {
		case strings.TrimPrefix(ImageBinary, "/"):
			if err := os.WriteFile(binary, data, 0o755); err != nil {
				t.Fatal(err)
			}
		case "etc/passwd", "etc/group":
			if !strings.Contains(string(data), ":"+gid+":") || h.Name == "etc/passwd" && !strings.Contains(string(data), ":"+uid+":"+gid+":") {
				t.Errorf("%s does not name the image's user %s:\n%s", h.Name, user, data)
			}
		}
	}
	for _, f := range []struct {
		name     string
		mode     int64
		uid, gid string
	}{
		{strings.TrimPrefix(ImageBinary, "/"), 0o755, "0", "0"},
		{strings.TrimPrefix(ImageDataDir, "/") + "/", 0o700, uid, gid},
		{"tmp/", 0o777 | 0o1000, "0", "0"},
		{"etc/passwd", 0o644, "0", "0"},
		{"etc/group", 0o644, "0", "0"},
	} {
		h := seen[strings.TrimSuffix(f.name, "/")]
		if h == nil {
			t.Errorf("the image has no %s", f.name)
			continue
		}
		if h.Mode != f.mode || strconv.Itoa(h.Uid) != f.uid || strconv.Itoa(h.Gid) != f.gid {
			t.Errorf("%s: mode %o owner %d:%d, want %o %s:%s", f.name, h.Mode, h.Uid, h.Gid, f.mode, f.uid, f.gid)
		}
	}
	return binary
}

// serveImage starts binary as the image's configuration does, with the
// data directory (the volume) a temporary directory and the port a free
// one, waits for its banner, asks /healthz and MCP tools/list and runs the
// health check, then stops it with an interrupt; the health check then
// fails with exit 1 (unhealthy).
func serveImage(t *testing.T, binary string, entrypoint, args, health []string, env map[string]string) {
	host, _, _ := strings.Cut(env["ELICITATION_ADDR"], ":")
	port := strconv.Itoa(testenv.FreePort(t))
	env["ELICITATION_ADDR"] = net.JoinHostPort(host, port)
	env["ELICITATION_DATA_DIR"] = t.TempDir()
	env["HOME"] = env["ELICITATION_DATA_DIR"]
	cmd := exec.Command(binary, append(entrypoint[1:], args...)...)
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	var log strings.Builder
	banner := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			log.WriteString(sc.Text() + "\n")
			if strings.Contains(sc.Text(), "Review pages:") {
				banner <- log.String()
			}
		}
		exited <- cmd.Wait()
	}()
	select {
	case out := <-banner:
		if want := "Review pages:                    " + env["ELICITATION_PUBLIC_URL"] + "/review/"; !strings.Contains(out, want) {
			t.Errorf("the banner does not say %q:\n%s", want, out)
		}
	case err := <-exited:
		exited <- err
		t.Fatalf("the image's binary exited before serving: %v", err)
	case <-time.After(2 * time.Minute):
		t.Fatal("the image's binary printed no banner in 2 minutes")
	}
	base := "http://" + net.JoinHostPort("127.0.0.1", port)
	resp, err := http.Get(base + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(body) != "ok\n" {
		t.Errorf("GET /healthz: %s %q, want 200 \"ok\"", resp.Status, body)
	}
	listTools(t, base+"/mcp")
	check := exec.Command(binary, health[2:]...)
	check.Env = cmd.Env
	if out, err := check.CombinedOutput(); err != nil || string(out) != "ok\n" {
		t.Errorf("the health check %q: %v %q, want ok", health, err, out)
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if err := <-exited; err != nil {
		t.Errorf("the server ended with %v after an interrupt, want exit 0", err)
	}
	exited <- nil
	check = exec.Command(binary, health[2:]...)
	check.Env = cmd.Env
	var exit *exec.ExitError
	if out, err := check.CombinedOutput(); !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Errorf("the health check of a stopped server: %v %q, want exit 1 (unhealthy)", err, out)
	}
	if _, err := os.Stat(filepath.Join(env["ELICITATION_DATA_DIR"], "elicitation.db")); err != nil {
		t.Errorf("the server kept no store in its data directory: %v", err)
	}
}

// listTools asks the server at url for its tools over MCP.
func listTools(t *testing.T, url string) {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "release-test", Version: "1"}, nil)
	session, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatalf("connecting to %s: %v", url, err)
	}
	defer session.Close()
	res, err := session.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	for _, want := range []string{"elicit_approval", "elicit_await", "elicit_result"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools/list has %q, want %s among them", names, want)
		}
	}
}

// checkOCIArchive unpacks the OCI archive and checks that its layout
// names one multi-platform index, tagged with the version, whose image for
// tg is the image of tg's docker-save tarball.
func checkOCIArchive(t *testing.T, path, tarballPath string, tg Target) {
	dir := t.TempDir()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(dir, filepath.FromSlash(h.Name))
		if h.Typeflag == tar.TypeDir {
			err = os.MkdirAll(dst, 0o755)
		} else {
			var data []byte
			if data, err = io.ReadAll(tr); err == nil {
				err = os.WriteFile(dst, data, 0o644)
			}
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	top, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		t.Fatalf("reading the OCI layout: %v", err)
	}
	m, err := top.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Manifests) != 1 || m.Manifests[0].MediaType != types.OCIImageIndex || m.Manifests[0].Annotations["org.opencontainers.image.ref.name"] != strings.TrimPrefix(testVersion, "v") {
		t.Fatalf("index.json lists %+v, want one image index named %s", m.Manifests, strings.TrimPrefix(testVersion, "v"))
	}
	idx, err := top.ImageIndex(m.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	var platforms []string
	for _, d := range im.Manifests {
		platforms = append(platforms, d.Platform.OS+"/"+d.Platform.Architecture)
	}
	if !slices.Equal(platforms, []string{tg.String()}) {
		t.Fatalf("the index holds %q, want %s", platforms, tg)
	}
	img, err := idx.Image(im.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	saved, err := tarball.ImageFromPath(tarballPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := img.ConfigName()
	if err != nil {
		t.Fatal(err)
	}
	want, err := saved.ConfigName()
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("the OCI layout's %s image has config %s, the image tarball's %s", tg, got, want)
	}
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("the OCI layout's image has %d layers (%v), want 1", len(layers), err)
	}
	rc, err := layers[0].Compressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	sum, _, err := v1.SHA256(rc)
	if d, derr := layers[0].Digest(); err != nil || derr != nil || sum != d {
		t.Errorf("the OCI layout's layer blob hashes to %s, its digest is %s (%v %v)", sum, d, err, derr)
	}
}

func envMap(env []string) map[string]string {
	m := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return m
}
