package main

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Docs are the files from the module root every archive holds beside the
// binaries.
var Docs = []string{"README.md"}

// entry is one file of an archive or an image layer.
type entry struct {
	name     string // slash-separated; a directory ends in "/"
	mode     fs.FileMode
	uid, gid int
	src      string // file to copy; empty for a directory or data
	data     []byte
}

// archiveEntries are an archive's files under the directory dir: the
// binaries, then Docs from the module root.
func archiveEntries(root, dir string, bins []string) []entry {
	es := []entry{{name: dir + "/", mode: 0o755}}
	for _, b := range bins {
		es = append(es, entry{name: dir + "/" + filepath.Base(b), mode: 0o755, src: b})
	}
	for _, d := range Docs {
		es = append(es, entry{name: dir + "/" + d, mode: 0o644, src: filepath.Join(root, d)})
	}
	return es
}

// writeArchive writes es into path: a zip for a path ending in .zip, else
// a gzip-compressed tar.
func writeArchive(path string, es []entry, mtime time.Time) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	if strings.HasSuffix(path, ".zip") {
		return writeZip(f, es, mtime)
	}
	gz, err := gzip.NewWriterLevel(f, gzip.BestCompression)
	if err != nil {
		return err
	}
	if err := writeTar(gz, es, mtime); err != nil {
		return err
	}
	return gz.Close()
}

// writeTar writes es into w as a tar stream whose every entry has mtime.
func writeTar(w io.Writer, es []entry, mtime time.Time) error {
	tw := tar.NewWriter(w)
	for _, e := range es {
		if err := tarEntry(tw, e, mtime); err != nil {
			return fmt.Errorf("%s: %w", e.name, err)
		}
	}
	return tw.Close()
}

func tarEntry(tw *tar.Writer, e entry, mtime time.Time) error {
	h := &tar.Header{Name: e.name, Mode: int64(e.mode.Perm()), Uid: e.uid, Gid: e.gid, ModTime: mtime, Format: tar.FormatPAX}
	if e.mode&fs.ModeSticky != 0 {
		h.Mode |= 0o1000
	}
	if strings.HasSuffix(e.name, "/") {
		h.Typeflag = tar.TypeDir
		return tw.WriteHeader(h)
	}
	data, err := entryData(e)
	if err != nil {
		return err
	}
	h.Typeflag, h.Size = tar.TypeReg, int64(len(data))
	if err := tw.WriteHeader(h); err != nil {
		return err
	}
	_, err = tw.Write(data)
	return err
}

func writeZip(w io.Writer, es []entry, mtime time.Time) error {
	zw := zip.NewWriter(w)
	for _, e := range es {
		h := &zip.FileHeader{Name: e.name, Method: zip.Deflate, Modified: mtime}
		h.SetMode(e.mode)
		if strings.HasSuffix(e.name, "/") {
			h.Method = zip.Store
			h.SetMode(e.mode | fs.ModeDir)
		}
		fw, err := zw.CreateHeader(h)
		if err != nil {
			return fmt.Errorf("%s: %w", e.name, err)
		}
		if strings.HasSuffix(e.name, "/") {
			continue
		}
		data, err := entryData(e)
		if err != nil {
			return fmt.Errorf("%s: %w", e.name, err)
		}
		if _, err := fw.Write(data); err != nil {
			return fmt.Errorf("%s: %w", e.name, err)
		}
	}
	return zw.Close()
}

func entryData(e entry) ([]byte, error) {
	if e.src == "" {
		if e.data == nil {
			return nil, errors.New("no content")
		}
		return e.data, nil
	}
	return os.ReadFile(e.src)
}
