//go:build unix

package run

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// sot runs lists the run directories of a project, which may have come
// with the repository: a record that is a symlink (to /dev/zero, read
// until memory ran out) or a named pipe (waited on forever) is passed over
// at once, and so is such an ignore file when a directory is looked at as
// a run's.
func TestListPassesOverARecordThatIsNoFile(t *testing.T) {
	top := t.TempDir()
	for name, make := range map[string]func(string) error{
		"linked": func(p string) error { return os.Symlink("/dev/zero", p) },
		"pipe":   func(p string) error { return syscall.Mkfifo(p, 0o644) },
	} {
		dir := filepath.Join(top, ".sot", "reviews", name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := make(filepath.Join(dir, StateFile)); err != nil {
			t.Skip(err)
		}
		if err := make(filepath.Join(dir, ignoreFile)); err != nil {
			t.Skip(err)
		}
	}
	done := make(chan int, 1)
	go func() {
		entries, err := List(top, []string{".sot/reviews/*"}, nil, Key())
		if err != nil {
			t.Error(err)
		}
		for _, d := range []string{"linked", "pipe"} {
			if isOwnIgnore(filepath.Join(top, ".sot", "reviews", d, ignoreFile)) {
				t.Errorf("the %s ignore file is taken for sot's own", d)
			}
		}
		done <- len(entries)
	}()
	select {
	case n := <-done:
		if n != 0 {
			t.Fatalf("listed %d runs; none is one", n)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("listing the runs did not end")
	}
}
