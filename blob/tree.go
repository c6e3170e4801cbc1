package blob

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sync/errgroup"
)

// Tree is a set of files by reference: a directory sent to another
// machine, each file stored once under its hash, so that a file sent
// before (an unchanged source, a git pack) is not sent again.
type Tree struct {
	Files []Entry `json:"files"`
}

// Entry is one file of a Tree.
type Entry struct {
	// Path is slash-separated and relative to the tree's top; it never
	// starts with "/" or holds "..".
	Path string `json:"path"`
	Ref  Ref    `json:"ref"`
	Size int64  `json:"size"`
	// Exec is set for a file its owner may run (a git hook is not one
	// sot runs; the bit is kept so that the copy is the same).
	Exec bool `json:"exec,omitempty"`
	// Trusted marks a file the sender vouches for beyond its bytes (a run
	// record signed with the sender's key, see engine/run).
	Trusted bool `json:"trusted,omitempty"`
}

// holder is a store that can say, for less than a Put costs, that it
// holds some bytes already, marking them as used (see Prune).
type holder interface {
	Held(ctx context.Context, ref Ref, size int64) bool
}

// ErrTreeTooLarge is returned by PutTree for a tree past its limit.
var ErrTreeTooLarge = errors.New("too large to send")

// PutTree stores the regular files paths name (slash-separated, relative
// to top) and the tree that lists them, and returns the tree's reference.
// A path that is not a regular file when it is read (a link, a directory,
// a file gone) is left out. limit bounds the tree's total size (0: none).
// trusted, when set, marks the entries it approves.
func PutTree(ctx context.Context, s Store, top string, paths []string, limit int64, trusted func(path string, data []byte) bool) (Ref, *Tree, error) {
	root, err := os.OpenRoot(top)
	if err != nil {
		return "", nil, fmt.Errorf("send %s: %w", top, err)
	}
	defer root.Close()
	paths = slices.Clone(paths)
	slices.Sort(paths)
	paths = slices.Compact(paths)
	entries := make([]*Entry, len(paths))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	var total int64
	for i, p := range paths {
		if !validPath(p) {
			return "", nil, fmt.Errorf("send %s: %q is not a path inside it", top, p)
		}
		fi, err := root.Lstat(filepath.FromSlash(p))
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		total += fi.Size()
		if limit > 0 && total > limit {
			return "", nil, fmt.Errorf("%s is %w: its files come to more than %d MB", top, ErrTreeTooLarge, limit>>20)
		}
		g.Go(func() error {
			data, err := root.ReadFile(filepath.FromSlash(p))
			if err != nil {
				return nil // gone since it was listed
			}
			ref := RefOf(data)
			// A file sent before is not sent again where asking costs less.
			if h, ok := s.(holder); !ok || !h.Held(gctx, ref, int64(len(data))) {
				if _, err := s.Put(gctx, data); err != nil {
					return err
				}
			}
			e := &Entry{Path: p, Ref: ref, Size: int64(len(data)), Exec: fi.Mode()&0o100 != 0}
			if trusted != nil {
				e.Trusted = trusted(p, data)
			}
			entries[i] = e
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return "", nil, err
	}
	t := &Tree{Files: make([]Entry, 0, len(entries))}
	for _, e := range entries {
		if e != nil {
			t.Files = append(t.Files, *e)
		}
	}
	data, err := json.Marshal(t)
	if err != nil {
		return "", nil, err
	}
	ref, err := s.Put(ctx, data)
	return ref, t, err
}

// GetTree reads the tree ref names.
func GetTree(ctx context.Context, s Store, ref Ref) (*Tree, error) {
	data, err := s.Get(ctx, ref)
	if err != nil {
		return nil, err
	}
	var t Tree
	if err := json.Unmarshal(data, &t); err != nil {
		return nil, fmt.Errorf("blob store: %s is not a tree: %w", ref, err)
	}
	for _, e := range t.Files {
		if !validPath(e.Path) {
			return nil, fmt.Errorf("blob store: tree %s names %q, which is not a path inside it", ref, e.Path)
		}
	}
	return &t, nil
}

// Materialize writes t's files into dir, which must be empty or absent.
// Every file is written through an os.Root of dir, so none lands outside
// it or through a link.
func Materialize(ctx context.Context, s Store, t *Tree, dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	// Each directory is made once, before the files: making it for every
	// file walked its path again through the root each time.
	made := map[string]bool{".": true}
	for _, e := range t.Files {
		if !validPath(e.Path) {
			return fmt.Errorf("%q is not a path inside the tree", e.Path)
		}
		if d := filepath.Dir(filepath.FromSlash(e.Path)); !made[d] {
			if err := root.MkdirAll(d, 0o700); err != nil {
				return err
			}
			made[d] = true
		}
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for _, e := range t.Files {
		g.Go(func() error {
			data, err := s.Get(gctx, e.Ref)
			if err != nil {
				return err
			}
			p := filepath.FromSlash(e.Path)
			mode := os.FileMode(0o600)
			if e.Exec {
				mode = 0o700
			}
			return root.WriteFile(p, data, mode)
		})
	}
	return g.Wait()
}

// Changed lists the regular files under dir whose bytes are not those of
// t (new files, and files whose content changed), slash-separated and
// sorted; skip, when set, leaves out the directories it approves (their
// slash-separated path relative to dir). same, when set, vouches that a
// file is as it was without reading it (its times have not moved).
func Changed(dir string, t *Tree, skip func(dirPath string) bool, same func(p string, fi fs.FileInfo) bool) ([]string, error) {
	had := make(map[string]Entry, len(t.Files))
	for _, e := range t.Files {
		had[e.Path] = e
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	var out []string
	err = fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != "." && skip != nil && skip(p) {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if same != nil && same(p, fi) {
			return nil
		}
		if e, ok := had[p]; ok {
			if fi.Size() == e.Size {
				data, err := root.ReadFile(p)
				if err != nil {
					return err
				}
				if RefOf(data) == e.Ref {
					return nil
				}
			}
		}
		out = append(out, p)
		return nil
	})
	return out, err
}

// Removed lists the files of t that are no longer regular files under
// dir, in t's order, leaving out those below a directory skip approves
// (as Changed does).
func Removed(dir string, t *Tree, skip func(dirPath string) bool) ([]string, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	var out []string
	for _, e := range t.Files {
		if Under(e.Path, skip) {
			continue
		}
		if fi, err := root.Lstat(filepath.FromSlash(e.Path)); err != nil || !fi.Mode().IsRegular() {
			out = append(out, e.Path)
		}
	}
	return out, nil
}

// Under reports whether the slash path p lies below a directory dir
// approves (nil approves none).
func Under(p string, dir func(string) bool) bool {
	for d := path.Dir(p); dir != nil && d != "."; d = path.Dir(d) {
		if dir(d) {
			return true
		}
	}
	return false
}

// validPath accepts a clean, relative, slash-separated path.
func validPath(p string) bool {
	return p != "" && p != "." && !strings.HasPrefix(p, "/") && path.Clean(p) == p && p != ".." && !strings.HasPrefix(p, "../") &&
		!strings.Contains(p, "\\") && !strings.ContainsRune(p, 0)
}
