package root

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// maxLines is the most lines a command's source file may hold: past it, a
// file does more than one job and is split.
const maxLines = 400

// Every non-test Go file of the CLI stays at most maxLines long; the test
// names each file over it.
func TestNoCommandFileOver400Lines(t *testing.T) {
	const cli = ".." // the test runs in cli/root
	checked := 0
	err := filepath.WalkDir(cli, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != cli && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		checked++
		n := bytes.Count(b, []byte("\n"))
		if len(b) > 0 && b[len(b)-1] != '\n' {
			n++
		}
		if n > maxLines {
			rel, _ := filepath.Rel(cli, path)
			t.Errorf("cli/%s has %d lines; split it so that no file is over %d", filepath.ToSlash(rel), n, maxLines)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 20 {
		t.Fatalf("checked %d files under cli/; the walk missed the commands", checked)
	}
}
