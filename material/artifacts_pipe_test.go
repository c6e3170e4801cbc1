//go:build unix

package material

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Reviewing a directory as artifacts passes over sot's own output
// directories, known by their run.json and a .gitignore of "*". A
// .gitignore that is a symlink to /dev/zero (which a repository can
// commit) was read until memory ran out; it is no sign of an output
// directory, and the walk goes on.
func TestArtifactsWithALinkedIgnoreFile(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{"doc.md": "# Design\n\nA plan.\n", "out/run.json": "{}\n", "out/notes.md": "# Notes\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("/dev/zero", filepath.Join(out, ".gitignore")); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := Artifacts([]string{dir}); done <- err }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("collecting the artifacts did not end")
	}
	if isOutputDir(out) {
		t.Error("a directory whose .gitignore links to /dev/zero is taken for an output directory")
	}
}
