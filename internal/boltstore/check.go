package boltstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"runtime/debug"

	bolt "go.etcd.io/bbolt"
)

// ErrDamaged is wrapped by Open's error when the file is not a whole,
// consistent store.
var ErrDamaged = errors.New("the store file is damaged")

// The bbolt file format (go.etcd.io/bbolt, format version 2): two meta pages
// at the start, each a 16-byte page header followed by the meta fields, in
// the machine's byte order, with an FNV-64a checksum of the fields before it.
const (
	pageHeaderSize = 16
	metaMagic      = 0xED0CDAED
	metaVersion    = 2
	metaSumOffset  = 56 // magic, version, pageSize, flags, root bucket (16), freelist, pgid, txid
	metaLen        = metaSumOffset + 8
)

type meta struct {
	pageSize uint32
	root     uint64 // the root bucket's page
	freelist uint64 // the freelist's page
	pgid     uint64 // the high-water mark: pages [0, pgid) are in use
	txid     uint64
}

func parseMeta(b []byte) (meta, bool) {
	if len(b) < pageHeaderSize+metaLen {
		return meta{}, false
	}
	m := b[pageHeaderSize : pageHeaderSize+metaLen]
	e := binary.NativeEndian
	h := fnv.New64a()
	h.Write(m[:metaSumOffset])
	if e.Uint32(m[0:]) != metaMagic || e.Uint32(m[4:]) != metaVersion || h.Sum64() != e.Uint64(m[metaSumOffset:]) {
		return meta{}, false
	}
	return meta{pageSize: e.Uint32(m[8:]), root: e.Uint64(m[16:]), freelist: e.Uint64(m[32:]), pgid: e.Uint64(m[40:]), txid: e.Uint64(m[48:])}, true
}

// checkFile reads a store file's meta pages before bbolt maps it, and
// describes what is wrong, or returns "" for a file bbolt can map safely
// (or one that does not exist yet or is empty, which bbolt initialises).
// bbolt maps the file into memory and trusts its meta pages: a file shorter
// than they say would fault (SIGBUS) on the first read past its end.
func checkFile(path string) (string, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	size := fi.Size()
	if size == 0 {
		return "", nil
	}
	m, ok, err := newestMeta(f)
	if err != nil {
		return "", err
	}
	if !ok {
		return fmt.Sprintf("it is not a store file, or its header is damaged (%d bytes)", size), nil
	}
	return checkMeta(m, size), nil
}

// newestMeta reads the file's two meta pages and returns the one of the
// later transaction among those that parse; ok is false when neither does.
func newestMeta(f *os.File) (meta, bool, error) {
	first := make([]byte, 4096)
	n, err := f.ReadAt(first, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return meta{}, false, err
	}
	m0, ok0 := parseMeta(first[:n])
	var m1 meta
	var ok1 bool
	if ok0 {
		second := make([]byte, pageHeaderSize+metaLen)
		if n, err := f.ReadAt(second, int64(m0.pageSize)); err == nil || errors.Is(err, io.EOF) {
			m1, ok1 = parseMeta(second[:n])
		}
	}
	switch {
	case !ok0 && !ok1:
		return meta{}, false, nil
	case ok1 && (!ok0 || m1.txid > m0.txid):
		return m1, true, nil
	}
	return m0, true, nil
}

// checkMeta says what is wrong with a file of size bytes whose header is
// m, or "" when nothing is.
func checkMeta(m meta, size int64) string {
	ps := uint64(m.pageSize)
	if ps < 512 || ps&(ps-1) != 0 {
		return fmt.Sprintf("its header names an impossible page size (%d)", ps)
	}
	if m.root >= m.pgid || (m.freelist >= m.pgid && m.freelist != ^uint64(0)) {
		return "its header points past the end of the data"
	}
	if want := m.pgid * ps; uint64(size) < want {
		return fmt.Sprintf("it is truncated (%d bytes, its header says at least %d)", size, want)
	}
	return ""
}

// checkConsistency runs bbolt's consistency check over every page and
// describes the first problem, or returns "".
func checkConsistency(db *bolt.DB) string {
	var problem string
	err := db.View(func(tx *bolt.Tx) error {
		for err := range tx.Check() {
			if problem == "" {
				problem = err.Error()
			}
		}
		return nil
	})
	if err != nil && problem == "" {
		problem = err.Error()
	}
	return problem
}

// damaged is Open's error for a damaged file: what is wrong, which file,
// how to restore.
func damaged(path, what string) error {
	return fmt.Errorf("%w: %s is not usable because %s; stop every process using it, then restore it from a backup, or move it aside to start with an empty store", ErrDamaged, path, what)
}

// faultError is a panic or memory fault inside bbolt, as an error.
type faultError struct {
	op     string
	reason string
}

func (e *faultError) Error() string {
	return fmt.Sprintf("%s: %v (%s)", e.op, ErrDamaged, e.reason)
}

func (e *faultError) Unwrap() error { return ErrDamaged }

// guard runs fn, turning a panic in bbolt (a damaged page it trusted) or a
// memory fault on the mapped file (the file shrank underneath it) into an
// error for this call, so a damaged store fails one call, never the process.
func guard(op string, fn func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = &faultError{op: op, reason: fmt.Sprint(r)}
		}
	}()
	return fn()
}
