//go:build unix

package review

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sotlabs/sot/engine"
	"github.com/sotlabs/sot/internal/plainfile"
	"github.com/sotlabs/sot/material"
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

// The records of earlier reviews that --since auto looks through may have
// come with the repository: a run.json that is a symlink to /dev/zero
// (which git can commit) read until memory ran out, and a named pipe
// waited forever. Both are passed over at once.
func TestPriorReviewsPassOverARecordThatIsNoFile(t *testing.T) {
	top := t.TempDir()
	for name, make := range map[string]func(string) error{
		"linked": func(p string) error { return os.Symlink("/dev/zero", p) },
		"pipe":   func(p string) error { return syscall.Mkfifo(p, 0o644) },
	} {
		dir := filepath.Join(top, ".sot", "reviews", name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := make(filepath.Join(dir, "run.json")); err != nil {
			t.Skip(err)
		}
	}
	done := make(chan []priorReview, 1)
	go func() { done <- priorReviews(top) }()
	select {
	case got := <-done:
		if len(got) != 0 {
			t.Fatalf("found %d earlier reviews; none is one", len(got))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("looking for earlier reviews did not end")
	}
}

// A file git tracks that the work tree holds as a named pipe stops the
// review with an error that is the user's to fix (exit 2), naming it.
func TestTrackedFileThatIsANamedPipeIsTheUsersToFix(t *testing.T) {
	o := benchOptionsAt(t, benchRepoTracked(t, 2, 10, true), "http://127.0.0.1:1", "openai:gpt-4.1")
	name := filepath.Join(o.Dir, "svc00", "handler000.go")
	if err := os.Remove(name); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(name, 0o644); err != nil {
		t.Skip(err)
	}
	_, err := Prepare(t.Context(), o)
	if !engine.IsUserError(err) || !errors.Is(err, material.ErrUnsupportedFile) || !strings.Contains(err.Error(), "svc00/handler000.go") {
		t.Fatalf("err = %v (%T); want a user error naming svc00/handler000.go", err, err)
	}
}
