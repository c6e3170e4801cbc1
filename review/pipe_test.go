//go:build unix

package review

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/sotlabs/sot/internal/plainfile"
)

// Files of the reviewed repository that sot reads, when one is a named
// pipe a plain read would wait on forever, are refused at once: the
// project's dismissed findings (and, in review/paw, a workflow context).
func TestRepositoryFilesThatAreNamedPipes(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		read       func(top string) error
	}{
		{"the dismissed findings", projectResolutions, func(top string) error { _, err := readDismissals(top); return err }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			top := t.TempDir()
			file := filepath.Join(top, tc.file)
			if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Mkfifo(file, 0o644); err != nil {
				t.Skip(err)
			}
			done := make(chan error, 1)
			go func() { done <- tc.read(top) }()
			select {
			case err := <-done:
				if !errors.Is(err, plainfile.ErrNotRegular) {
					t.Fatalf("error %v; want one saying the file is not a regular file", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the read waits on the named pipe")
			}
		})
	}
}
