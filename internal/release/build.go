package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// Checksums is the file holding the SHA-256 of every other artifact, in
// the format sha256sum -c reads.
const Checksums = "checksums.txt"

// Build writes the artifacts of o into o.Out and returns their names
// (relative to o.Out), checksums.txt last.
func Build(ctx context.Context, o Options) ([]string, error) {
	if err := emptyDir(o.Out); err != nil {
		return nil, err
	}
	work, err := os.MkdirTemp(o.Out, ".build-")
	if err != nil {
		return nil, fmt.Errorf("work directory: %w", err)
	}
	defer os.RemoveAll(work)
	var files []string
	var imgs []v1.Image
	for _, t := range o.Targets {
		made, img, err := buildTarget(ctx, o, t, filepath.Join(work, t.OS+"_"+t.Arch))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", t, err)
		}
		files = append(files, made...)
		if img != nil {
			imgs = append(imgs, img)
		}
	}
	if len(imgs) > 0 {
		files = append(files, OCIArchive(o.Version))
		if err := writeOCIArchive(filepath.Join(o.Out, OCIArchive(o.Version)), imgs, o.Version, o.Epoch); err != nil {
			return nil, fmt.Errorf("OCI archive: %w", err)
		}
	}
	if err := os.RemoveAll(work); err != nil {
		return nil, err
	}
	if err := writeChecksums(o.Out, files); err != nil {
		return nil, err
	}
	return append(files, Checksums), nil
}

// emptyDir makes dir, which must be absent or empty: a release never
// mixes with an older one's files.
func emptyDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if err == nil && len(entries) > 0 {
		return fmt.Errorf("output directory %s is not empty: remove it first", dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("output directory: %w", err)
	}
	return nil
}

// Base is the name shared by a target's files:
// mcp-elicitation_1.2.3_linux_amd64.
func Base(version string, t Target) string {
	return fmt.Sprintf("%s_%s_%s_%s", Project, strings.TrimPrefix(version, "v"), t.OS, t.Arch)
}

// Archive, SBOM and Image name a target's files.
func Archive(version string, t Target) string {
	if t.OS == "windows" {
		return Base(version, t) + ".zip"
	}
	return Base(version, t) + ".tar.gz"
}

func SBOM(version string, t Target) string  { return Base(version, t) + ".sbom.cdx.json" }
func Image(version string, t Target) string { return Base(version, t) + ".image.tar" }

// OCIArchive names the OCI image layout holding every linux image:
// mcp-elicitation_1.2.3_linux.oci.tar.
func OCIArchive(version string) string {
	return fmt.Sprintf("%s_%s_linux.oci.tar", Project, strings.TrimPrefix(version, "v"))
}

// buildTarget builds t's binaries into work and writes its archive, its
// SBOM and, for linux, its image, which it returns.
func buildTarget(ctx context.Context, o Options, t Target, work string) ([]string, v1.Image, error) {
	fmt.Fprintf(o.Log, "release: building %s %s\n", o.Version, t)
	bins, err := goBuild(ctx, o.Root, o.Version, t, work)
	if err != nil {
		return nil, nil, err
	}
	files := []string{Archive(o.Version, t), SBOM(o.Version, t)}
	if err := writeArchive(filepath.Join(o.Out, files[0]), archiveEntries(o.Root, Base(o.Version, t), bins), o.Epoch); err != nil {
		return nil, nil, fmt.Errorf("archive: %w", err)
	}
	if err := writeSBOM(filepath.Join(o.Out, files[1]), o.Version, t, bins, o.Epoch); err != nil {
		return nil, nil, fmt.Errorf("SBOM: %w", err)
	}
	if t.OS != "linux" {
		return files, nil, nil
	}
	img, err := newImage(bins[0], o.Version, t.Arch, o.Epoch)
	if err == nil {
		files = append(files, Image(o.Version, t))
		err = writeImage(filepath.Join(o.Out, files[2]), img, o.Version)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("image: %w", err)
	}
	return files, img, nil
}

// goBuild builds Commands for t into dir and returns the binaries' paths
// in the order of Commands.
func goBuild(ctx context.Context, root, version string, t Target, dir string) ([]string, error) {
	args := []string{"build", "-trimpath", "-ldflags", "-s -w -X main.version=" + version, "-o", dir + string(filepath.Separator)}
	cmd := exec.CommandContext(ctx, "go", append(args, Commands...)...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+t.OS, "GOARCH="+t.Arch, "GOFLAGS=-buildvcs=false")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("go build: %w\n%s", err, out.Bytes())
	}
	bins := make([]string, len(Commands))
	for i, c := range Commands {
		bins[i] = filepath.Join(dir, filepath.Base(c))
		if t.OS == "windows" {
			bins[i] += ".exe"
		}
	}
	return bins, nil
}

// writeChecksums writes checksums.txt over files, sorted by name.
func writeChecksums(dir string, files []string) error {
	var b strings.Builder
	for _, name := range slices.Sorted(slices.Values(files)) {
		sum, err := sha256File(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s  %s\n", sum, name)
	}
	return os.WriteFile(filepath.Join(dir, Checksums), []byte(b.String()), 0o644)
}

func sha256File(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("checksum of %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// git runs git in the working directory and returns its trimmed output.
func git(args ...string) (string, error) {
	out, err := exec.Command("git", args...).Output()
	return strings.TrimSpace(string(out)), err
}
