//go:build unix

package paw

import (
	"errors"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/sotlabs/sot/internal/plainfile"
)

// A workflow context or review context file that is a named pipe, which a
// plain read would wait on forever, is refused at once.
func TestContextFilesThatAreNamedPipes(t *testing.T) {
	file := filepath.Join(t.TempDir(), "WorkflowContext.md")
	if err := syscall.Mkfifo(file, 0o644); err != nil {
		t.Skip(err)
	}
	for name, read := range map[string]func() error{
		"LoadWorkflow": func() error { _, err := LoadWorkflow(file); return err },
		"LoadFile":     func() error { _, err := LoadFile(file); return err },
	} {
		done := make(chan error, 1)
		go func() { done <- read() }()
		select {
		case err := <-done:
			if !errors.Is(err, plainfile.ErrNotRegular) {
				t.Errorf("%s: error %v; want one saying the file is not a regular file", name, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s waits on the named pipe", name)
		}
	}
}
