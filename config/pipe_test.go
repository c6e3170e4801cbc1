//go:build unix

package config

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/sotlabs/sot/internal/plainfile"
)

// A project's .sot/config.yaml that is a named pipe, which a plain read
// would wait on forever, is refused at once with an error that says so.
func TestProjectConfigThatIsANamedPipe(t *testing.T) {
	l, work := loader(t, "", "")
	file := filepath.Join(work, ".sot", "config.yaml")
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(file, 0o644); err != nil {
		t.Skip(err)
	}
	done := make(chan error, 1)
	go func() { _, _, err := l.Load(); done <- err }()
	select {
	case err := <-done:
		if !errors.Is(err, plainfile.ErrNotRegular) {
			t.Fatalf("error %v; want one saying the file is not a regular file", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("loading the configuration waits on the named pipe")
	}
	// Trust looks at the file as it is, without waiting either.
	checked := make(chan TrustCheck, 1)
	go func() { checked <- l.Trust.TrustedFile(file, work) }()
	select {
	case c := <-checked:
		if c.Trusted {
			t.Error("a named pipe is trusted")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the trust check waits on the named pipe")
	}
}
