//go:build unix

package corpus

import (
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// statEntries makes a directory with one entry of each kind the walk
// tells apart, and returns it with the entries' names.
func statEntries(t *testing.T) (string, []string) {
	t.Helper()
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("note.md", "# A note\n\nSome text.\n")
	write("empty.md", "")
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("note.md", filepath.Join(dir, "link.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("nowhere.md", filepath.Join(dir, "dangling.md")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Date(2020, 5, 6, 7, 8, 9, 123456789, time.UTC)
	if err := os.Chtimes(filepath.Join(dir, "note.md"), old, old); err != nil {
		t.Fatal(err)
	}
	return dir, []string{"dangling.md", "empty.md", "link.md", "note.md", "pipe", "sub"}
}

// TestEntryStatIsLstat: what the walk reads of each entry's stat, through
// the directory it holds open, is what os.Lstat says of it: its kind
// (regular, directory, link, other), size, times and inode. A name that
// is not there is an error.
func TestEntryStatIsLstat(t *testing.T) {
	dir, names := statEntries(t)
	d, err := openDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.close()
	listed, err := d.names()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(listed, names) {
		t.Fatalf("listed %q, want %q", listed, names)
	}
	checkStats(t, dir, d, names)
}

func checkStats(t *testing.T, dir string, d dirHandle, names []string) {
	t.Helper()
	kinds := map[string]entryKind{"dangling.md": kindLink, "empty.md": kindRegular, "link.md": kindLink,
		"note.md": kindRegular, "pipe": kindOther, "sub": kindDir}
	for _, name := range names {
		got, err := d.lstat(name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		fi, err := os.Lstat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(statOf(fi), got, cmp.AllowUnexported(entryStat{})); d != "" {
			t.Errorf("%s: the walk's stat differs from os.Lstat's (-lstat +walk):\n%s", name, d)
		}
		if got.kind != kinds[name] {
			t.Errorf("%s: kind %d, want %d", name, got.kind, kinds[name])
		}
	}
	if got, _ := d.lstat("note.md"); got.mtime != time.Date(2020, 5, 6, 7, 8, 9, 123456789, time.UTC).UnixNano() {
		t.Errorf("note.md's modification time: %v", time.Unix(0, got.mtime).UTC())
	}
	if _, err := d.lstat("gone.md"); err == nil {
		t.Error("the stat of a name that is not there gave no error")
	}
}

// TestScanSkipsWhatIsNotAFile: a pipe in a corpus is skipped as not a
// regular file, and a dangling link as broken; a link inside the corpus
// is read as what it points to, and that file once (it is met after the
// link). Nothing stops the walk.
func TestScanSkipsWhatIsNotAFile(t *testing.T) {
	dir, _ := statEntries(t)
	if err := os.WriteFile(filepath.Join(dir, "sub", "inner.md"), []byte("# Inner\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := Scan([]string{dir}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	reasons := map[string]string{}
	for _, s := range res.Skipped {
		reasons[filepath.Base(s.Path)] = s.Reason
	}
	if reasons["pipe"] != "not a regular file" || reasons["dangling.md"] != "broken link" || len(reasons) != 3 {
		t.Errorf("skipped: %+v; want the pipe as not a regular file, the dangling link as broken, the empty file", res.Skipped)
	}
	var read []string
	for _, s := range res.Sources {
		read = append(read, filepath.Base(s.Path))
	}
	slices.Sort(read)
	if want := []string{"inner.md", "link.md"}; !slices.Equal(read, want) {
		t.Errorf("sources %q, want %q", read, want)
	}
}
