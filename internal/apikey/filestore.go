package apikey

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"
)

// FileStore is the embedded Store: one small JSON file (mode 0600) holding
// the hashes. A server and the admin command can use the same file at the
// same time: writes replace the file atomically under a lock file, and
// reads notice a changed file and load it again, so a revocation takes
// effect at the next request.
type FileStore struct {
	path string

	mu      sync.Mutex
	loaded  fileStamp
	byHash  map[string]Key
	ordered []Key
}

var _ Store = (*FileStore)(nil)

type fileStamp struct {
	size    int64
	modTime time.Time
	ok      bool
}

type fileContents struct {
	Keys []Key `json:"keys"`
}

// NewFileStore returns a FileStore on the file at path; the file is created
// by the first Put.
func NewFileStore(path string) *FileStore { return &FileStore{path: path} }

// refresh loads the file if it changed since the last load. Callers hold mu.
func (s *FileStore) refresh() error {
	fi, err := os.Stat(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		s.loaded, s.byHash, s.ordered = fileStamp{ok: true}, map[string]Key{}, nil
		return nil
	}
	if err != nil {
		return err
	}
	stamp := fileStamp{size: fi.Size(), modTime: fi.ModTime(), ok: true}
	if stamp == s.loaded {
		return nil
	}
	b, err := os.ReadFile(s.path)
	if err != nil {
		return err
	}
	var c fileContents
	if err := json.Unmarshal(b, &c); err != nil {
		return fmt.Errorf("read %s: %w", s.path, err)
	}
	s.byHash = make(map[string]Key, len(c.Keys))
	for _, k := range c.Keys {
		s.byHash[k.Hash] = k
	}
	s.ordered, s.loaded = c.Keys, stamp
	return nil
}

// update loads the file under the lock file, lets fn change the keys, and
// writes them back atomically.
func (s *FileStore) update(ctx context.Context, fn func(keys []Key) ([]Key, error)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	unlock, err := lockFile(ctx, s.path+".lock")
	if err != nil {
		return err
	}
	defer unlock()
	s.loaded = fileStamp{} // re-read whatever is there now
	if err := s.refresh(); err != nil {
		return err
	}
	keys, err := fn(slices.Clone(s.ordered))
	if err != nil {
		return err
	}
	b, err := json.MarshalIndent(fileContents{Keys: keys}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(s.path), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(s.path), filepath.Base(s.path)+".*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), s.path); err != nil {
		return err
	}
	s.loaded = fileStamp{}
	return nil
}

// lockFile takes an exclusive lock by creating path; a lock older than
// staleLock is taken to be left by a crashed process and removed.
func lockFile(ctx context.Context, path string) (func(), error) {
	const staleLock = 10 * time.Second
	for {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if err == nil {
			f.Close()
			return func() { os.Remove(path) }, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
		if fi, err := os.Stat(path); err == nil && time.Since(fi.ModTime()) > staleLock {
			os.Remove(path)
			continue
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("lock %s: %w", path, ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// Put implements Store.
func (s *FileStore) Put(ctx context.Context, k Key) error {
	return s.update(ctx, func(keys []Key) ([]Key, error) {
		for _, o := range keys {
			if o.Hash == k.Hash || o.ID == k.ID {
				return nil, ErrConflict
			}
		}
		return append(keys, k), nil
	})
}

// Lookup implements Store.
func (s *FileStore) Lookup(_ context.Context, hash string) (Key, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.refresh(); err != nil {
		return Key{}, err
	}
	k, ok := s.byHash[hash]
	if !ok {
		return Key{}, ErrNotFound
	}
	return k, nil
}

// Revoke implements Store.
func (s *FileStore) Revoke(ctx context.Context, id string, at time.Time) (Key, error) {
	var out Key
	err := s.update(ctx, func(keys []Key) ([]Key, error) {
		for i, k := range keys {
			if k.ID == id {
				if k.RevokedAt.IsZero() {
					keys[i].RevokedAt = at.UTC()
				}
				out = keys[i]
				return keys, nil
			}
		}
		return nil, ErrNotFound
	})
	return out, err
}

// List implements Store.
func (s *FileStore) List(context.Context) ([]Key, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.refresh(); err != nil {
		return nil, err
	}
	return slices.Clone(s.ordered), nil
}
