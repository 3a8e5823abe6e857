package main

import (
	"bytes"
	"io"
	"io/fs"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
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

// writeImage writes the image of the linux binary for arch to path, as
// the tarball docker save writes (docker load, podman load and crane push
// read it).
func writeImage(path, binary, version, arch string, at time.Time) error {
	var layerTar bytes.Buffer
	if err := writeTar(&layerTar, imageEntries(binary), at); err != nil {
		return err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar.Bytes())), nil
	})
	if err != nil {
		return err
	}
	img, err := mutate.ConfigFile(empty.Image, &v1.ConfigFile{
		Architecture: arch,
		OS:           "linux",
		Config:       imageConfig(version),
		RootFS:       v1.RootFS{Type: "layers"},
	})
	if err != nil {
		return err
	}
	img, err = mutate.Append(img, mutate.Addendum{Layer: layer, History: v1.History{
		Created:   v1.Time{Time: at},
		CreatedBy: "go run ./internal/release (" + ImageBinary + ", account files, " + ImageDataDir + ")",
	}})
	if err != nil {
		return err
	}
	if img, err = mutate.CreatedAt(img, v1.Time{Time: at}); err != nil {
		return err
	}
	ref, err := name.NewTag(ImageRef(version))
	if err != nil {
		return err
	}
	return tarball.WriteToFile(path, ref, img)
}

func itoa(n int) string { return strconv.Itoa(n) }
