package material

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A review of the working tree runs git no more than it must: the filter
// drivers are read once though the diff and the untracked files ask at
// once, and HEAD, which finding the work tree resolves, is not resolved
// again for the diff's base and head.
func TestDiffRunsGitOnceForEachQuestion(t *testing.T) {
	r := newRepo(t)
	r.write("a.go", "package a\n")
	head := r.commit("init")
	r.write("a.go", "package a\n\nfunc A() {}\n")
	r.write("new.go", "package a\n")

	real, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed")
	}
	bin := t.TempDir()
	log := filepath.Join(t.TempDir(), "calls")
	script := "#!/bin/sh\nprintf '%s\\n' \"$*\" >> " + log + "\nexec " + real + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))

	m := r.diff(DiffOptions{Untracked: true})
	if m.Base != head || m.Head != head || !m.Worktree {
		t.Errorf("base %s head %s worktree %v; want HEAD %s for both, from the work tree", m.Base, m.Head, m.Worktree, head)
	}
	if len(m.Files) != 2 {
		t.Errorf("files %v, want the changed and the untracked one", m.Paths())
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	calls := strings.Split(strings.TrimSpace(string(b)), "\n")
	count := func(s string) int {
		n := 0
		for _, c := range calls {
			if strings.Contains(c, s) {
				n++
			}
		}
		return n
	}
	if n := count("--get-regexp ^filter"); n != 1 {
		t.Errorf("the filter drivers were read %d times, want once:\n%s", n, b)
	}
	if n := count("HEAD^{commit}"); n != 1 {
		t.Errorf("HEAD was resolved %d times, want once:\n%s", n, b)
	}
}
