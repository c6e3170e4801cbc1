package blob

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// A tree sent and written back holds the same files, a file sent before
// is stored once, and Changed names only what differs afterwards.
func TestTreeRoundTrip(t *testing.T) {
	ctx := context.Background()
	s, err := OpenDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	top := t.TempDir()
	write(t, top, "a.txt", "alpha")
	write(t, top, "sub/b.txt", "beta")
	write(t, top, "sub/same.txt", "alpha")
	if err := os.Symlink("/etc/passwd", filepath.Join(top, "link")); err != nil {
		t.Fatal(err)
	}
	ref, tree, err := PutTree(ctx, s, top, []string{"sub/b.txt", "a.txt", "link", "gone.txt", "sub/same.txt"}, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, e := range tree.Files {
		paths = append(paths, e.Path)
	}
	if !slices.Equal(paths, []string{"a.txt", "sub/b.txt", "sub/same.txt"}) {
		t.Errorf("the tree holds %v; a link and a missing file are left out", paths)
	}
	got, err := GetTree(ctx, s, ref)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "copy")
	if err := Materialize(ctx, s, got, dst); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dst, "sub", "b.txt")); string(b) != "beta" {
		t.Errorf("sub/b.txt reads %q", b)
	}
	write(t, dst, "sub/b.txt", "changed")
	write(t, dst, "out/new.txt", "new")
	write(t, dst, "skipped/x.txt", "x")
	changed, err := Changed(dst, got, func(d string) bool { return d == "skipped" }, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(changed, []string{"out/new.txt", "sub/b.txt"}) {
		t.Errorf("Changed = %v, want the new and the changed file", changed)
	}
	if err := os.Remove(filepath.Join(dst, "sub", "same.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dst, "a.txt")); err != nil {
		t.Fatal(err)
	}
	if removed, err := Removed(dst, got, nil); err != nil || !slices.Equal(removed, []string{"a.txt", "sub/same.txt"}) {
		t.Errorf("Removed = %v, %v; want the removed files", removed, err)
	}
	if removed, err := Removed(dst, got, func(d string) bool { return d == "sub" }); err != nil || !slices.Equal(removed, []string{"a.txt"}) {
		t.Errorf("Removed skipping sub = %v, %v; want only a.txt", removed, err)
	}
}

// A tree that names a path out of its top is refused when read and when
// written, and a tree past its limit is refused when sent.
func TestTreeRefusesPathsOutOfItsTop(t *testing.T) {
	ctx := context.Background()
	s, err := OpenDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	data, _ := s.Put(ctx, []byte("x"))
	for _, p := range []string{"../escape", "/etc/passwd", "a/../../b", "", ".", "a\\b"} {
		bad, _ := s.Put(ctx, []byte(`{"files":[{"path":`+quote(p)+`,"ref":"`+string(data)+`","size":1}]}`))
		if _, err := GetTree(ctx, s, bad); err == nil {
			t.Errorf("GetTree took a tree naming %q", p)
		}
		if err := Materialize(ctx, s, &Tree{Files: []Entry{{Path: p, Ref: data}}}, t.TempDir()); err == nil {
			t.Errorf("Materialize wrote a tree naming %q", p)
		}
	}
	top := t.TempDir()
	write(t, top, "big", string(make([]byte, 2048)))
	if _, _, err := PutTree(ctx, s, top, []string{"big"}, 1024, nil); !errors.Is(err, ErrTreeTooLarge) {
		t.Errorf("a tree past its limit: %v", err)
	}
}

func quote(s string) string {
	b := []byte{'"'}
	for _, c := range []byte(s) {
		if c == '\\' || c == '"' {
			b = append(b, '\\')
		}
		b = append(b, c)
	}
	return string(append(b, '"'))
}

func write(t *testing.T, top, p, body string) {
	t.Helper()
	full := filepath.Join(top, filepath.FromSlash(p))
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}
