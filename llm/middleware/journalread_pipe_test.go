//go:build unix

package middleware

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// A run's journal that came with a repository as a named pipe, or as a
// symlink to /dev/zero, is no journal sot reads: sot runs, which counts
// each run's calls, gets an error at once instead of waiting forever.
func TestJournalUsageOfAJournalThatIsNoFile(t *testing.T) {
	dir := t.TempDir()
	pipe, linked := filepath.Join(dir, "pipe.ndjson"), filepath.Join(dir, "linked.ndjson")
	if err := syscall.Mkfifo(pipe, 0o644); err != nil {
		t.Skip(err)
	}
	if err := os.Symlink("/dev/zero", linked); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{pipe, linked} {
		done := make(chan error, 1)
		go func() { _, _, err := JournalUsage(p); done <- err }()
		select {
		case err := <-done:
			if err == nil {
				t.Errorf("%s: no error", filepath.Base(p))
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: counting the journal's calls waits", filepath.Base(p))
		}
	}
}
