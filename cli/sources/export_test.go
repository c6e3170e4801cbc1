package sources

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/sotlabs/sot/cli/cmdutil"
)

// writeFile replaces a file atomically, refuses a symlink (and leaves what
// it points to alone) and anything but a regular file, and leaves no
// temporary file behind.
func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.md")
	if err := writeFile(path, []byte("one")); err != nil {
		t.Fatal(err)
	}
	if err := writeFile(path, []byte("two")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "two" {
		t.Errorf("file holds %q", b)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v", fi.Mode())
	}

	target := filepath.Join(dir, "target")
	os.WriteFile(target, []byte("keep"), 0o600)
	link := filepath.Join(dir, "link.md")
	if err := os.Symlink(target, link); err != nil {
		t.Skip(err)
	}
	err := writeFile(link, []byte("evil"))
	if err == nil || cmdutil.Code(err) != cmdutil.ExitUsage {
		t.Errorf("through a symlink: %v", err)
	}
	if b, _ := os.ReadFile(target); string(b) != "keep" {
		t.Errorf("the link's target was written: %q", b)
	}
	if err := writeFile(dir, []byte("x")); err == nil {
		t.Error("a directory was replaced")
	}
	if err := writeFile(filepath.Join(dir, "missing", "x.md"), []byte("x")); cmdutil.Code(err) != cmdutil.ExitUsage {
		t.Errorf("into a missing directory: %v", err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 3 { // out.md, target, link.md
		for _, e := range entries {
			t.Log(e.Name())
		}
		t.Errorf("%d entries, want 3", len(entries))
	}
}
