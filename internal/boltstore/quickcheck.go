package boltstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	bolt "go.etcd.io/bbolt"
)

// bbolt's page header: id (8 bytes), flags (2), count (2), overflow (4);
// a branch page's elements follow it, 16 bytes each: pos, ksize, pgid.
const (
	flagBranch   = 0x01
	flagLeaf     = 0x02
	flagFreelist = 0x10
	branchElem   = 16
)

// pageHeader is what checkTrees reads of a page: pread from the file, not
// through bbolt's memory map, so a check touches no memory of the process
// beyond its buffer.
type pageHeader struct {
	id       uint64
	flags    uint16
	count    uint16
	overflow uint32
}

// checkTrees is Open's check of the pages every call depends on, in time
// and memory that do not grow with the store: the freelist's page, the
// root bucket's page and each top-level bucket's root page and, for a
// branch root, the headers of the pages it points to (at most a page's
// worth). Each must name itself and be of a kind bbolt can read. A page
// deeper in a tree is read only by the call that needs it (an internal
// error for that call if it is damaged) and by Check.
func checkTrees(abs string, db *bolt.DB) (string, error) {
	var roots []uint64
	var freelist, high uint64
	err := guard("check store "+abs, func() error {
		return db.View(func(tx *bolt.Tx) error {
			high = uint64(tx.Size()) / uint64(db.Info().PageSize)
			return tx.ForEach(func(_ []byte, b *bolt.Bucket) error {
				if r := uint64(b.Root()); r != 0 {
					roots = append(roots, r)
				}
				return nil
			})
		})
	})
	if err != nil {
		return "", err
	}
	f, err := os.Open(abs)
	if err != nil {
		return "", err
	}
	defer f.Close()
	m, ok, err := newestMeta(f)
	if err != nil || !ok {
		return "its header is damaged", err
	}
	freelist = m.freelist
	c := treeChecker{f: f, pageSize: int64(m.pageSize), high: high}
	if freelist != ^uint64(0) {
		if problem, err := c.page(freelist, flagFreelist); problem != "" || err != nil {
			return problem, err
		}
	}
	for _, r := range append([]uint64{m.root}, roots...) {
		if problem, err := c.tree(r); problem != "" || err != nil {
			return problem, err
		}
	}
	return "", nil
}

type treeChecker struct {
	f        *os.File
	pageSize int64
	high     uint64 // pages [0, high) are in the file
}

// checkedPage, if set (by tests), is told of every page checkTrees reads.
var checkedPage func(id uint64)

// header reads page id's header and, for a branch page, its elements.
func (c treeChecker) header(id uint64, withElems bool) (pageHeader, []byte, error) {
	if checkedPage != nil {
		checkedPage(id)
	}
	n := int64(pageHeaderSize)
	if withElems {
		n = c.pageSize
	}
	buf := make([]byte, n)
	if _, err := c.f.ReadAt(buf, int64(id)*c.pageSize); err != nil && !errors.Is(err, io.EOF) {
		return pageHeader{}, nil, err
	}
	e := binary.NativeEndian
	h := pageHeader{id: e.Uint64(buf[0:]), flags: e.Uint16(buf[8:]), count: e.Uint16(buf[10:]), overflow: e.Uint32(buf[12:])}
	return h, buf[pageHeaderSize:], nil
}

// page checks that page id names itself, is of one of the kinds want and
// ends before the end of the data.
func (c treeChecker) page(id uint64, want ...uint16) (string, error) {
	if id >= c.high {
		return fmt.Sprintf("page %d is past the end of the data", id), nil
	}
	h, _, err := c.header(id, false)
	if err != nil {
		return "", err
	}
	if h.id != id || !slices.Contains(want, h.flags) || id+uint64(h.overflow) >= c.high {
		return fmt.Sprintf("page %d does not hold what its tree says (it names page %d, kind %#x)", id, h.id, h.flags), nil
	}
	return "", nil
}

// tree checks a bucket's root page and, if it is a branch, its children's
// headers.
func (c treeChecker) tree(root uint64) (string, error) {
	if root >= c.high {
		return fmt.Sprintf("page %d is past the end of the data", root), nil
	}
	h, elems, err := c.header(root, true)
	if err != nil {
		return "", err
	}
	switch {
	case h.id != root || (h.flags != flagBranch && h.flags != flagLeaf):
		return fmt.Sprintf("page %d does not hold what its tree says (it names page %d, kind %#x)", root, h.id, h.flags), nil
	case h.flags == flagLeaf:
		return "", nil
	case h.count == 0 || int(h.count)*branchElem > len(elems):
		// A branch page bigger than a page (overflow) is checked by the
		// full check only.
		if h.count == 0 {
			return fmt.Sprintf("branch page %d is empty", root), nil
		}
		return "", nil
	}
	for i := range int(h.count) {
		if problem, err := c.page(binary.NativeEndian.Uint64(elems[i*branchElem+8:]), flagBranch, flagLeaf); problem != "" || err != nil {
			return problem, err
		}
	}
	return "", nil
}

// Check runs the full consistency check of the store file at path: every
// page of every tree, bbolt's own check. Open checks only the pages every
// call depends on (constant time however big the store); Check reads the
// whole file, so it is the operator's command (elicitation check), run
// while no process holds the store. It returns nil for a whole store, an
// error wrapping ErrDamaged that says what is wrong, or another error
// (the file is in use, cannot be read).
func Check(path string) error {
	abs, _, err := closedFile("check store", path)
	if err != nil {
		return err
	}
	db, err := openChecked(abs)
	if err != nil {
		return err
	}
	defer db.Close()
	if problem := checkConsistency(db); problem != "" {
		return damaged(abs, "its pages are damaged ("+problem+")")
	}
	return nil
}

// closedFile is the absolute path of the store file at path, and its
// details, for an operator's command (op) that needs it closed: an error
// if it is open in this process or cannot be found.
func closedFile(op, path string) (string, os.FileInfo, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", nil, fmt.Errorf("%s %s: %w", op, path, err)
	}
	registryMu.Lock()
	_, open := registry[abs]
	registryMu.Unlock()
	if open {
		return "", nil, fmt.Errorf("%s %s: the store is open in this process; close it first", op, abs)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return "", nil, fmt.Errorf("%s %s: %w", op, abs, err)
	}
	return abs, fi, nil
}

// openTimeout is how long Open waits for another process's lock.
const openTimeout = 2 * time.Second
