package boltstore

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Compact rewrites the store file at path into a new file that holds only
// what is live, then puts it in place of the old one, and returns both
// sizes. bbolt never shrinks a file: pages freed by cleanup are reused but
// stay allocated. The file must not be open, in this process or another
// (the running server holds it): Compact refuses it then.
func Compact(path string) (before, after int64, err error) {
	abs, fi, err := closedFile("compact", path)
	if err != nil {
		return 0, 0, err
	}
	before = fi.Size()
	src, err := openChecked(abs)
	if err != nil {
		return before, 0, err
	}
	defer func() {
		if src != nil {
			_ = src.Close()
		}
	}()
	tmp := abs + ".compacting"
	_ = os.Remove(tmp) // a previous attempt's leftover
	dst, err := bolt.Open(tmp, fi.Mode().Perm(), &bolt.Options{Timeout: 2 * time.Second})
	if err != nil {
		return before, 0, fmt.Errorf("compact %s: create %s: %w", abs, tmp, err)
	}
	err = guard("compact "+abs, func() error { return bolt.Compact(dst, src, 16<<20) })
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(tmp)
		return before, 0, fmt.Errorf("compact %s: %w", abs, err)
	}
	if err := src.Close(); err != nil {
		_ = os.Remove(tmp)
		return before, 0, fmt.Errorf("compact %s: %w", abs, err)
	}
	src = nil
	if err := os.Rename(tmp, abs); err != nil {
		_ = os.Remove(tmp)
		return before, 0, fmt.Errorf("compact %s: %w", abs, err)
	}
	if d, err := os.Open(filepath.Dir(abs)); err == nil {
		_ = d.Sync() // make the rename durable
		_ = d.Close()
	}
	if fi, err := os.Stat(abs); err == nil {
		after = fi.Size()
	}
	return before, after, nil
}
