package main

import (
	"bytes"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The container image of the local server: one layer on nothing (no base
// image to pull, nothing in it but the static binary, the account files
// and the directories it uses), run as a user that is not root.
const (
	// ImageBinary is where the binary sits in the image.
	ImageBinary = "/usr/local/bin/elicitation"
	// ImageDataDir is the data directory, a volume owned by ImageUID.
	ImageDataDir = "/data"
	// ImagePort is the port the server listens on, on every interface.
	ImagePort = "8080"
	// ImageUID and ImageGID are the user and group the server runs as
	// (65532, the "nonroot" of distroless images).
	ImageUID = 65532
	ImageGID = 65532
)

// ImageRef is the name an image tarball loads as: mcp-elicitation:1.2.3.
func ImageRef(version string) string {
	return Project + ":" + strings.TrimPrefix(version, "v")
}

// imageConfig is the image's runtime configuration: "docker run IMAGE"
// serves on 0.0.0.0:8080 with its data in the volume; "docker run IMAGE
// keys create --principal alice" runs an operator command on the same
// data directory; the health check is "elicitation health".
func imageConfig(version string) v1.Config {
	return v1.Config{
		Entrypoint: []string{ImageBinary},
		Cmd:        []string{"serve"},
		User:       itoa(ImageUID) + ":" + itoa(ImageGID),
		WorkingDir: ImageDataDir,
		Env: []string{
			"PATH=/usr/local/bin",
			"HOME=" + ImageDataDir,
			"ELICITATION_ADDR=0.0.0.0:" + ImagePort,
			"ELICITATION_DATA_DIR=" + ImageDataDir,
			// Review links a browser on the container's host opens
			// (docker run -p 8080:8080); set it to the address reviewers
			// reach anywhere else.
			"ELICITATION_PUBLIC_URL=http://localhost:" + ImagePort,
		},
		// The image holds no curl: the binary asks its own /healthz.
		Healthcheck: &v1.HealthConfig{
			Test:        []string{"CMD", ImageBinary, "health"},
			Interval:    30 * time.Second,
			Timeout:     10 * time.Second,
			StartPeriod: 10 * time.Second,
			Retries:     3,
		},
		ExposedPorts: map[string]struct{}{ImagePort + "/tcp": {}},
		Volumes:      map[string]struct{}{ImageDataDir: {}},
		StopSignal:   "SIGTERM",
		Labels: map[string]string{
			"org.opencontainers.image.title":       Project,
			"org.opencontainers.image.description": "Self-hosted human-in-the-loop elicitation for MCP agents: the local server (elicitation serve)",
			"org.opencontainers.image.version":     strings.TrimPrefix(version, "v"),
			"org.opencontainers.image.source":      "https://github.com/mcp-elicitation/elicitation",
		},
	}
}

// imageEntries are the files of the image's one layer.
func imageEntries(binary string) []entry {
	return []entry{
		{name: "etc/", mode: 0o755},
		{name: "etc/passwd", mode: 0o644, data: []byte("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:" + itoa(ImageUID) + ":" + itoa(ImageGID) + ":nonroot:" + ImageDataDir + ":/sbin/nologin\n")},
		{name: "etc/group", mode: 0o644, data: []byte("root:x:0:\nnonroot:x:" + itoa(ImageGID) + ":\n")},
		{name: "tmp/", mode: 0o777 | fs.ModeSticky},
		{name: "usr/", mode: 0o755},
		{name: "usr/local/", mode: 0o755},
		{name: "usr/local/bin/", mode: 0o755},
		{name: strings.TrimPrefix(ImageBinary, "/"), mode: 0o755, src: binary},
		{name: strings.TrimPrefix(ImageDataDir, "/") + "/", mode: 0o700, uid: ImageUID, gid: ImageGID},
	}
}

// newImage is the image of the linux binary for arch, in OCI media types.
func newImage(binary, version, arch string, at time.Time) (v1.Image, error) {
	var layerTar bytes.Buffer
	if err := writeTar(&layerTar, imageEntries(binary), at); err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar.Bytes())), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, err
	}
	base := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	img, err := mutate.ConfigFile(base, &v1.ConfigFile{
		Architecture: arch,
		OS:           "linux",
		Config:       imageConfig(version),
		RootFS:       v1.RootFS{Type: "layers"},
	})
	if err != nil {
		return nil, err
	}
	img, err = mutate.Append(img, mutate.Addendum{Layer: layer, History: v1.History{
		Created:   v1.Time{Time: at},
		CreatedBy: "go run ./internal/release (" + ImageBinary + ", account files, " + ImageDataDir + ")",
	}})
	if err != nil {
		return nil, err
	}
	return mutate.CreatedAt(img, v1.Time{Time: at})
}

// writeImage writes img to path as the tarball docker save writes (docker
// load, podman load and crane push read it), tagged ImageRef(version).
func writeImage(path string, img v1.Image, version string) error {
	ref, err := name.NewTag(ImageRef(version))
	if err != nil {
		return err
	}
	return tarball.WriteToFile(path, ref, img)
}

// writeOCIArchive writes imgs (one per architecture) to path as a tar of
// an OCI image layout whose index.json names one multi-platform index,
// annotated with the image's tag: skopeo copy --all oci-archive:PATH
// docker://… pushes every architecture under one tag.
func writeOCIArchive(path string, imgs []v1.Image, version string, at time.Time) error {
	var adds []mutate.IndexAddendum
	for _, img := range imgs {
		cf, err := img.ConfigFile()
		if err != nil {
			return err
		}
		adds = append(adds, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{
			Platform: &v1.Platform{OS: cf.OS, Architecture: cf.Architecture},
		}})
	}
	idx := mutate.AppendManifests(mutate.IndexMediaType(empty.Index, types.OCIImageIndex), adds...)
	dir, err := os.MkdirTemp(filepath.Dir(path), ".oci-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	lp, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}
	if err := lp.AppendIndex(idx, layout.WithAnnotations(map[string]string{
		"org.opencontainers.image.ref.name": strings.TrimPrefix(version, "v"),
	})); err != nil {
		return err
	}
	es, err := dirEntries(dir)
	if err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := writeTar(f, es, at); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// dirEntries are the files under dir, in lexical order, as archive
// entries named relative to dir.
func dirEntries(dir string) ([]entry, error) {
	var es []entry
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == dir {
			return err
		}
		rel := filepath.ToSlash(path[len(dir)+1:])
		if d.IsDir() {
			es = append(es, entry{name: rel + "/", mode: 0o755})
			return nil
		}
		es = append(es, entry{name: rel, mode: 0o644, src: path})
		return nil
	})
	return es, err
}

func itoa(n int) string { return strconv.Itoa(n) }
