//go:build unix

package ask

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/sotlabs/sot/internal/plainfile"
)

// A project's themes file that is a named pipe is refused at once.
func TestThemesFileThatIsANamedPipe(t *testing.T) {
	top := t.TempDir()
	file := filepath.Join(top, ThemesFile)
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(file, 0o644); err != nil {
		t.Skip(err)
	}
	done := make(chan error, 1)
	go func() { _, err := LoadThemes(top); done <- err }()
	select {
	case err := <-done:
		if !errors.Is(err, plainfile.ErrNotRegular) {
			t.Fatalf("error %v; want one saying the file is not a regular file", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("reading the themes waits on the named pipe")
	}
}
