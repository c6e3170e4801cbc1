//go:build unix

package plainfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// A regular file is read, through a symlink too; a named pipe, a device
// and a directory are refused at once, and a missing file is ErrNotExist.
func TestRead(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain.yaml")
	if err := os.WriteFile(plain, []byte("a: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.yaml")
	if err := os.Symlink(plain, link); err != nil {
		t.Fatal(err)
	}
	pipe := filepath.Join(dir, "pipe.yaml")
	if err := syscall.Mkfifo(pipe, 0o644); err != nil {
		t.Skip(err)
	}
	for _, name := range []string{plain, link} {
		if b, err := Read(name); err != nil || string(b) != "a: 1\n" {
			t.Errorf("Read(%s) = %q, %v", name, b, err)
		}
	}
	for _, name := range []string{pipe, "/dev/zero", dir} {
		done := make(chan error, 1)
		go func() { _, err := Read(name); done <- err }()
		select {
		case err := <-done:
			if !errors.Is(err, ErrNotRegular) {
				t.Errorf("Read(%s): %v; want ErrNotRegular", name, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("Read(%s) waits", name)
		}
	}
	if _, err := Read(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing file: %v", err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	if b, err := ReadIn(root, "plain.yaml"); err != nil || string(b) != "a: 1\n" {
		t.Errorf("ReadIn(plain.yaml) = %q, %v", b, err)
	}
	if _, err := ReadIn(root, "pipe.yaml"); !errors.Is(err, ErrNotRegular) {
		t.Errorf("ReadIn(pipe.yaml): %v; want ErrNotRegular", err)
	}

	// A file of sot's own: read when plain, refused when a symlink (even
	// to a plain file) or a pipe.
	if b, err := ReadOwn(plain); err != nil || string(b) != "a: 1\n" {
		t.Errorf("ReadOwn(plain) = %q, %v", b, err)
	}
	zero := filepath.Join(dir, "zero.json")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]error{link: ErrSymlink, zero: ErrSymlink, pipe: ErrNotRegular} {
		if _, err := ReadOwn(name); !errors.Is(err, want) {
			t.Errorf("ReadOwn(%s): %v; want %v", filepath.Base(name), err, want)
		}
	}
}
