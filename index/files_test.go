package index

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestVersion1IndexIsUpgraded: an index sot wrote before files were kept
// gains the files table and keeps its sources; it is not taken for a
// planted one.
func TestVersion1IndexIsUpgraded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "corpus.db")
	rawExec(t, path, schema, fmt.Sprintf("PRAGMA application_id = %d", applicationID), "PRAGMA user_version = 1",
		"INSERT INTO docs (id, path, type, hash, title, body) VALUES ('a', 'a.md', 'meeting', 'h', 'Pricing', 'enterprise pricing')")
	x, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	if why := x.Rebuilt(); why != "" {
		t.Fatalf("the version 1 index was rebuilt: %s", why)
	}
	if _, err := x.Get(context.Background(), "a"); err != nil {
		t.Errorf("its source is lost: %v", err)
	}
	if v := pragma(t, x, "user_version"); v != fmt.Sprint(SchemaVersion) {
		t.Errorf("user_version %s after the upgrade", v)
	}
	if _, err := x.UpdateFiles(context.Background(), FileUpdate{Put: []File{{Path: "/c/a.md", Hash: "h", Doc: Doc{ID: "a"}}}}); err != nil {
		t.Errorf("the upgraded index keeps no file: %v", err)
	}
}

// TestFilesGoWithTheirSources: a file forgotten, or read again with other
// content, takes the source only it gave out of the index; a source added
// by hand, which no file gave, stays; a source removed by hand takes its
// files with it, so that they are read again.
func TestFilesGoWithTheirSources(t *testing.T) {
	ctx := context.Background()
	x, _ := openTemp(t)
	docs := trustDocs()
	file := func(path string, d Doc) File {
		d.Text = ""
		return File{Path: path, Size: 1, ModTime: 2, Change: 3, Inode: 4, Checked: 5, Reader: "r", Hash: "h-" + d.ID, Doc: d}
	}
	if _, err := x.Add(ctx, docs[2]); err != nil { // by hand
		t.Fatal(err)
	}
	if _, err := x.UpdateFiles(ctx, FileUpdate{Put: []File{file("/c/a.md", docs[0]), file("/c/b.md", docs[1])}, Docs: docs[:2]}); err != nil {
		t.Fatal(err)
	}
	files, err := x.Files(ctx)
	if err != nil || len(files) != 2 {
		t.Fatalf("Files = %d, %v", len(files), err)
	}
	if f := files[0]; f.Size != 1 || f.ModTime != 2 || f.Change != 3 || f.Inode != 4 || f.Checked != 5 || f.Doc.Title == "" {
		t.Errorf("a file comes back as %+v", f)
	}

	edited := docs[1]
	edited.ID, edited.Text = "b2", "hiring engineers, edited"
	c, err := x.UpdateFiles(ctx, FileUpdate{Put: []File{file("/c/b.md", edited)}, Gone: []string{"/c/a.md", "/c/never.md"}, Docs: []Doc{edited}})
	if err != nil {
		t.Fatal(err)
	}
	if c.Added != 1 || c.Removed != 2 {
		t.Errorf("changes %+v, want b2 added, a and b removed", c)
	}
	for id, want := range map[string]bool{"a": false, "b": false, "b2": true, "c": true} {
		_, err := x.Get(ctx, id)
		if got := err == nil; got != want || err != nil && !errors.Is(err, ErrNotFound) {
			t.Errorf("source %s in the index: %v (%v), want %v", id, got, err, want)
		}
	}
	if _, err := x.Remove(ctx, "b2"); err != nil {
		t.Fatal(err)
	}
	if files, _ := x.Files(ctx); len(files) != 0 {
		t.Errorf("the files of a removed source are still known: %+v", files)
	}
}

// TestOpenChecksAChangedFileInFull: Close records the file it leaves, and
// a file changed after that (a write, whatever its times say) is checked
// in full on the next Open.
func TestOpenChecksAChangedFileInFull(t *testing.T) {
	path := filepath.Join(t.TempDir(), "corpus.db")
	plant(t, path)
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fingerprint(fi) == "" {
		t.Skip("no inode change time here: every Open checks in full")
	}
	if !checkedBefore(path, fi) {
		t.Fatal("Close left no record of the file it closed")
	}
	rawExec(t, path, "UPDATE docs SET title = 'changed' WHERE id = 'a'")
	fi2, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if fi2, err = os.Lstat(path); err != nil {
		t.Fatal(err)
	}
	if checkedBefore(path, fi2) {
		t.Error("a file written after Close, its modification time set back, is taken as the one Close left")
	}
}
