package temporal

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/sotlabs/sot/blob"
)

// A kept copy of a project: the first run writes every file; a second
// run of the unchanged project writes none and leaves the files as they
// were (their inodes and times, which the corpus index trusts); a changed
// project writes only what changed, removes what it no longer has, and
// keeps the copy's own index; what the command wrote is found from the
// files whose times moved.
func TestMirror(t *testing.T) {
	ctx := context.Background()
	store, err := blob.OpenDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	src := t.TempDir()
	put := func(files map[string]string) *blob.Tree {
		t.Helper()
		var paths []string
		for p, body := range files {
			full := filepath.Join(src, filepath.FromSlash(p))
			if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
			paths = append(paths, p)
		}
		_, tree, err := blob.PutTree(ctx, store, src, paths, 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		return tree
	}
	keep := func(d string) bool { return d == ".sot/index" }
	work := t.TempDir()
	run := func(tree *blob.Tree) (*mirror, int) {
		t.Helper()
		m, ok := openMirror(work, "0123456789abcdef")
		if !ok {
			t.Fatal("the mirror could not be taken")
		}
		n, err := m.sync(ctx, store, tree, keep)
		if err != nil {
			t.Fatal(err)
		}
		m.begin(tree)
		return m, n
	}
	first := map[string]string{"notes/a.md": "alpha", "notes/b.md": "beta", ".sot/index/index.db": "client's index"}
	m, n := run(put(first))
	if n != 3 {
		t.Errorf("the first run wrote %d files, want 3", n)
	}
	if _, again := openMirror(work, "0123456789abcdef"); again {
		t.Error("a second run took the mirror while the first held it")
	}
	// The command rewrites the copy's index and writes an output.
	if err := os.WriteFile(filepath.Join(m.dir, ".sot", "index", "index.db"), []byte("the copy's index"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(m.dir, "out"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(m.dir, "out", "ANSWER.md"), []byte("answer"), 0o644); err != nil {
		t.Fatal(err)
	}
	changed, err := m.changed(&blob.Tree{}, keep)
	if err != nil || !slices.Equal(changed, []string{"out/ANSWER.md"}) {
		t.Errorf("changed = %v, %v; want the output only (the index is left out)", changed, err)
	}
	if err := m.record(); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(filepath.Join(m.dir, "notes", "a.md"))
	m.close()

	// The same project again: nothing is written, a.md is the same file.
	m, n = run(put(first))
	if n != 0 {
		t.Errorf("the unchanged project wrote %d files, want 0", n)
	}
	if again, _ := os.Stat(filepath.Join(m.dir, "notes", "a.md")); !os.SameFile(fi, again) || !again.ModTime().Equal(fi.ModTime()) {
		t.Error("notes/a.md was written again")
	}
	m.close()

	// b.md changed, a.md gone, c.md new: only b and c are written, a is
	// removed, the output of the earlier run too (the client did not send
	// it back), and the copy's index stays the copy's.
	os.Remove(filepath.Join(src, "notes", "a.md"))
	m, n = run(put(map[string]string{"notes/b.md": "beta, changed", "notes/c.md": "gamma", ".sot/index/index.db": "client's index"}))
	if n != 2 {
		t.Errorf("the changed project wrote %d files, want 2", n)
	}
	for p, want := range map[string]string{"notes/b.md": "beta, changed", "notes/c.md": "gamma", ".sot/index/index.db": "the copy's index"} {
		if b, _ := os.ReadFile(filepath.Join(m.dir, filepath.FromSlash(p))); string(b) != want {
			t.Errorf("%s holds %q, want %q", p, b, want)
		}
	}
	for _, gone := range []string{"notes/a.md", "out/ANSWER.md"} {
		if _, err := os.Stat(filepath.Join(m.dir, filepath.FromSlash(gone))); !os.IsNotExist(err) {
			t.Errorf("%s is still in the copy", gone)
		}
	}
	m.close()
}
