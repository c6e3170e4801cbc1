//go:build unix

package persona

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A project persona file that is a named pipe, which a plain read would
// wait on forever, is skipped with a warning that names it; the other
// personas load.
func TestProjectPersonaThatIsANamedPipe(t *testing.T) {
	root := t.TempDir()
	tree(t, root, map[string]string{"repo/.sot/personas/ok.md": specialistFile("implementation", "ok-marker")})
	pipe := filepath.Join(root, "repo", ".sot", "personas", "pipe.md")
	if err := syscall.Mkfifo(pipe, 0o644); err != nil {
		t.Skip(err)
	}
	type result struct {
		lib *Library
		err error
	}
	done := make(chan result, 1)
	go func() { lib, err := Discover(Dirs{Project: filepath.Join(root, "repo")}); done <- result{lib, err} }()
	var r result
	select {
	case r = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("discovering the personas waits on the named pipe")
	}
	if r.err != nil {
		t.Fatal(r.err)
	}
	if p, ok := r.lib.Get(Specialist, "ok"); !ok || p.Title != "ok-marker" {
		t.Errorf("the persona beside the pipe was not loaded: %v", p)
	}
	found := false
	for _, pr := range r.lib.Problems {
		found = found || strings.Contains(pr.Error(), "pipe.md") && strings.Contains(pr.Error(), "not a regular file")
	}
	if !found {
		t.Errorf("no warning names the pipe: %v", r.lib.Problems)
	}
	os.Remove(pipe)
}
