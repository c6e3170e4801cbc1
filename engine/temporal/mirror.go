package temporal

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/sotlabs/sot/blob"
)

// A mirror is a worker's copy of one project, kept between the runs it
// drives: a run sent again with the project unchanged rewrites nothing,
// so the copy's files keep their inodes and times, and the corpus index
// kept in the copy (Driver.Keep) finds them as it left them instead of
// reading every source again. A mirror is used by one run at a time; a
// run that finds it busy copies the project afresh.
type mirror struct {
	dir, manifest string
	unlock        func()
	// synced is what the files were when the command began.
	synced map[string]mirrorFile
}

// mirrorFile is what a mirror knows of one of its files.
type mirrorFile struct {
	Ref   blob.Ref `json:"ref"`
	Size  int64    `json:"size"`
	MTime int64    `json:"mtime"`
}

// openMirror takes the mirror named key in work, or reports false when
// another run holds it or it cannot be had.
func openMirror(work, key string) (*mirror, bool) {
	if key == "" || !validKey(key) {
		return nil, false
	}
	base := filepath.Join(work, "mirrors")
	if err := os.MkdirAll(base, 0o700); err != nil {
		return nil, false
	}
	unlock, ok := lockFile(filepath.Join(base, key+".lock"))
	if !ok {
		return nil, false
	}
	return &mirror{dir: filepath.Join(base, key), manifest: filepath.Join(base, key+".json"), unlock: unlock}, true
}

func validKey(k string) bool {
	for _, c := range k {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return len(k) >= 8 && len(k) <= 64
}

func (m *mirror) close() { m.unlock() }

// load reads what the mirror recorded after its last run (nothing when
// there was none, or the record does not read: every file is then
// written again).
func (m *mirror) load() map[string]mirrorFile {
	var files map[string]mirrorFile
	if b, err := os.ReadFile(m.manifest); err == nil && json.Unmarshal(b, &files) == nil {
		return files
	}
	return map[string]mirrorFile{}
}

// sync makes the mirror hold t: files t lacks are removed, files whose
// recorded content and times still hold are left alone, and the rest are
// written. What lies below a directory keep approves is kept when the
// mirror has it (the copy's own corpus index).
func (m *mirror) sync(ctx context.Context, s blob.Store, t *blob.Tree, keep func(dir string) bool) (written int, err error) {
	known := m.load()
	want := make(map[string]blob.Entry, len(t.Files))
	for _, e := range t.Files {
		want[e.Path] = e
	}
	if err := os.MkdirAll(m.dir, 0o700); err != nil {
		return 0, err
	}
	root, err := os.OpenRoot(m.dir)
	if err != nil {
		return 0, err
	}
	defer root.Close()
	have := map[string]bool{}
	err = fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != "." && keep != nil && keep(p) {
				return fs.SkipDir
			}
			return nil
		}
		if _, ok := want[p]; ok && d.Type().IsRegular() {
			have[p] = true
			return nil
		}
		return root.Remove(p)
	})
	if err != nil {
		return 0, fmt.Errorf("tidy the project's copy: %w", err)
	}
	var todo blob.Tree
	for _, e := range t.Files {
		if blob.Under(e.Path, keep) {
			if _, err := root.Lstat(filepath.FromSlash(e.Path)); err == nil {
				continue
			}
		}
		if k, ok := known[e.Path]; ok && have[e.Path] && k.Ref == e.Ref {
			if fi, err := root.Lstat(filepath.FromSlash(e.Path)); err == nil && fi.Size() == k.Size && fi.ModTime().UnixNano() == k.MTime {
				continue
			}
		}
		if fi, err := root.Lstat(filepath.FromSlash(e.Path)); err == nil && !fi.Mode().IsRegular() {
			// A directory where the project now has a file.
			if err := root.RemoveAll(filepath.FromSlash(e.Path)); err != nil {
				return 0, err
			}
		}
		todo.Files = append(todo.Files, e)
	}
	// The manifest no longer holds: if this run dies now, the next one
	// writes every file again.
	_ = os.Remove(m.manifest)
	return len(todo.Files), blob.Materialize(ctx, s, &todo, m.dir)
}

// begin records what the files are as the command begins.
func (m *mirror) begin(t *blob.Tree) {
	m.synced = make(map[string]mirrorFile, len(t.Files))
	for _, e := range t.Files {
		if fi, err := os.Lstat(filepath.Join(m.dir, filepath.FromSlash(e.Path))); err == nil && fi.Mode().IsRegular() {
			m.synced[e.Path] = mirrorFile{Ref: e.Ref, Size: fi.Size(), MTime: fi.ModTime().UnixNano()}
		}
	}
}

// changed lists the files the command wrote or changed, as blob.Changed
// does, reading only those whose times moved since begin.
func (m *mirror) changed(t *blob.Tree, skip func(string) bool) ([]string, error) {
	return blob.Changed(m.dir, t, skip, func(p string, fi fs.FileInfo) bool {
		k, ok := m.synced[p]
		return ok && k.Size == fi.Size() && k.MTime == fi.ModTime().UnixNano()
	})
}

// record writes what the mirror holds after the command, for the next
// run's sync: a file whose times did not change keeps what begin saw, and
// any other is read to learn its content.
func (m *mirror) record() error {
	files := map[string]mirrorFile{}
	root, err := os.OpenRoot(m.dir)
	if err != nil {
		return err
	}
	defer root.Close()
	err = fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !d.Type().IsRegular() {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if k, ok := m.synced[p]; ok && k.Size == fi.Size() && k.MTime == fi.ModTime().UnixNano() {
			files[p] = k
			return nil
		}
		data, err := root.ReadFile(p)
		if err != nil {
			return err
		}
		files[p] = mirrorFile{Ref: blob.RefOf(data), Size: fi.Size(), MTime: fi.ModTime().UnixNano()}
		return nil
	})
	if err != nil {
		return err
	}
	b, err := json.Marshal(files)
	if err != nil {
		return err
	}
	return os.WriteFile(m.manifest, b, 0o600)
}
