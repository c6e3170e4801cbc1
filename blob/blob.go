// Package blob keeps the payloads that travel between sot processes by
// reference: a request, with its material, or an answer is written once
// under the hash of its bytes, and only that reference crosses a queue
// whose messages are small (a Temporal payload is at most 2 MB).
//
// Dir is the store of one machine, or of machines that share a volume; S3
// is a bucket of an S3-compatible service, for machines far apart.
package blob

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"
	"time"
)

// Ref names stored bytes: "sha256:" and the hex digest of the bytes.
type Ref string

// RefOf is the reference of data.
func RefOf(data []byte) Ref {
	sum := sha256.Sum256(data)
	return Ref("sha256:" + hex.EncodeToString(sum[:]))
}

// ErrNotFound means a reference or name the store does not hold.
var ErrNotFound = errors.New("not in the blob store")

// Store holds bytes by their reference, and small records by name.
type Store interface {
	// Put stores data and returns its reference.
	Put(ctx context.Context, data []byte) (Ref, error)
	// Get returns the bytes of ref, checked against it.
	Get(ctx context.Context, ref Ref) ([]byte, error)
}

// Dir is a Store in a directory. Objects are written to a temporary file
// and renamed into place, so a reader never sees half an object, and
// every path is opened through an os.Root, so nothing is read or written
// through a symbolic link out of the directory.
type Dir struct {
	root *os.Root
}

// OpenDir opens (and makes, if need be) the store in dir.
func OpenDir(dir string) (*Dir, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("blob store: %w", err)
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("blob store: %w", err)
	}
	return &Dir{root: r}, nil
}

// Close releases the directory.
func (d *Dir) Close() error { return d.root.Close() }

// objectPath is where ref's bytes live: objects/ab/cdef....
func objectPath(ref Ref) (string, error) {
	hexsum, ok := strings.CutPrefix(string(ref), "sha256:")
	if !ok || len(hexsum) != 64 || strings.Trim(hexsum, "0123456789abcdef") != "" {
		return "", fmt.Errorf("blob store: %q is not a reference", ref)
	}
	return path.Join("objects", hexsum[:2], hexsum[2:]), nil
}

// Put stores data under its hash; bytes already held are not written again.
func (d *Dir) Put(_ context.Context, data []byte) (Ref, error) {
	ref := RefOf(data)
	p, _ := objectPath(ref)
	// An object of the right size is taken as written (Get checks its
	// hash); anything else there, a link or a torn file, is replaced.
	if fi, err := d.root.Lstat(p); err == nil && fi.Mode().IsRegular() && fi.Size() == int64(len(data)) {
		if now := time.Now(); now.Sub(fi.ModTime()) > refreshAfter {
			// Used again: Prune must not take it for unused.
			_ = d.root.Chtimes(p, now, now)
		}
		return ref, nil
	}
	if err := d.write(p, data); err != nil {
		return "", err
	}
	return ref, nil
}

// Get reads ref's bytes and checks them against it.
func (d *Dir) Get(_ context.Context, ref Ref) ([]byte, error) {
	p, err := objectPath(ref)
	if err != nil {
		return nil, err
	}
	data, err := d.root.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("blob store: %s: %w", ref, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("blob store: %w", err)
	}
	if RefOf(data) != ref {
		return nil, fmt.Errorf("blob store: %s holds other bytes than its hash says (a damaged or tampered store)", ref)
	}
	return data, nil
}

// write puts data at p through a temporary file renamed into place; a
// symbolic link at p is replaced, never followed.
func (d *Dir) write(p string, data []byte) error {
	dir := path.Dir(p)
	if err := d.root.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("blob store: %w", err)
	}
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	tmp := path.Join(dir, ".tmp-"+hex.EncodeToString(rnd[:]))
	f, err := d.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("blob store: %w", err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		_ = d.root.Remove(tmp)
		return fmt.Errorf("blob store: %w", err)
	}
	if err := f.Close(); err != nil {
		_ = d.root.Remove(tmp)
		return fmt.Errorf("blob store: %w", err)
	}
	if err := d.root.Rename(tmp, p); err != nil {
		_ = d.root.Remove(tmp)
		return fmt.Errorf("blob store: %w", err)
	}
	return nil
}

// Keep records data under name (letters, digits, '-', '.' and '_'),
// replacing what was kept there before.
func (d *Dir) Keep(_ context.Context, name string, data []byte) error {
	p, err := keptPath(name)
	if err != nil {
		return err
	}
	return d.write(p, data)
}

// Kept returns what was kept under name, or ErrNotFound.
func (d *Dir) Kept(_ context.Context, name string) ([]byte, error) {
	p, err := keptPath(name)
	if err != nil {
		return nil, err
	}
	if fi, err := d.root.Lstat(p); err == nil && !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("blob store: %s is not a regular file", name)
	}
	data, err := d.root.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("blob store: %s: %w", name, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("blob store: %w", err)
	}
	return data, nil
}

// keptPath is where a named record lives: kept/<name>.
func keptPath(name string) (string, error) {
	if name == "" || len(name) > 200 || strings.Trim(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._") != "" || strings.HasPrefix(name, ".") {
		return "", fmt.Errorf("blob store: %q is not a name", name)
	}
	return path.Join("kept", name), nil
}
