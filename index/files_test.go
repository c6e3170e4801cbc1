package index

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestEarlierIndexIsUpgraded: an index sot wrote with an earlier schema
// (version 1, before files were kept; version 2, before docs_rank) gains
// what the later versions add and keeps its sources; it is not taken for
// a planted one, and it searches as a new one does.
func TestEarlierIndexIsUpgraded(t *testing.T) {
	for v := 1; v < SchemaVersion; v++ {
		t.Run(fmt.Sprintf("version %d", v), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "corpus.db")
			rawExec(t, path, schemaOf(v), fmt.Sprintf("PRAGMA application_id = %d", applicationID), fmt.Sprintf("PRAGMA user_version = %d", v),
				"INSERT INTO docs (id, path, type, hash, title, body) VALUES ('a', 'a.md', 'meeting', 'h', 'Pricing', 'enterprise pricing')")
			x, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer x.Close()
			if why := x.Rebuilt(); why != "" {
				t.Fatalf("the version %d index was rebuilt: %s", v, why)
			}
			if _, err := x.Get(context.Background(), "a"); err != nil {
				t.Errorf("its source is lost: %v", err)
			}
			if got := pragma(t, x, "user_version"); got != fmt.Sprint(SchemaVersion) {
				t.Errorf("user_version %s after the upgrade", got)
			}
			if _, err := x.UpdateFiles(context.Background(), FileUpdate{Put: []File{{Path: "/c/a.md", Hash: "h", Doc: Doc{ID: "a"}}}}); err != nil {
				t.Errorf("the upgraded index keeps no file: %v", err)
			}
			hits, err := x.Search(context.Background(), "pricing", SearchOptions{})
			if err != nil || len(hits) != 1 || hits[0].Doc.ID != "a" {
				t.Errorf("Search = %v, %v; want the source a", hits, err)
			}
		})
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

// TestParseDateMatchesTimeParse: the dates Files reads digit by digit are
// the ones time.Parse reads, and what time.Parse refuses is refused.
func TestParseDateMatchesTimeParse(t *testing.T) {
	for _, s := range []string{
		"2024-07-01T00:00:00.000000000Z", "0000-01-01T00:00:00.000000000Z", "9999-12-31T23:59:59.999999999Z",
		"2024-02-29T12:34:56.123456789Z", "2023-02-29T12:34:56.000000000Z", "2024-13-01T00:00:00.000000000Z",
		"2024-07-01T24:00:00.000000000Z", "2024-07-01T00:60:00.000000000Z", "2024-07-01T00:00:60.000000000Z",
		"2024-07-00T00:00:00.000000000Z", "2024-07-01T00:00:00.00000000xZ", "2024-07-01 00:00:00.000000000Z",
		"+024-07-01T00:00:00.000000000Z", "2024-07-01T00:00:00.000000000", "", "yesterday",
	} {
		want, werr := time.Parse(dateLayout, s)
		got, gerr := parseDate(s)
		if (werr == nil) != (gerr == nil) || !got.Equal(want) || got.Location() != want.Location() {
			t.Errorf("parseDate(%q) = %v, %v; time.Parse gives %v, %v", s, got, gerr, want, werr)
		}
	}
}
