package material

import (
	"strings"
	"testing"

	"github.com/sotlabs/sot/internal/gittest"
)

// A review of the working tree runs git no more than it must: the filter
// drivers are read once though several of the diff's commands ask, and HEAD, which finding the work tree resolves, is not resolved
// again for the diff's base and head.
func TestDiffRunsGitOnceForEachQuestion(t *testing.T) {
	r := newRepo(t)
	r.write("a.go", "package a\n")
	head := r.commit("init")
	r.write("a.go", "package a\n\nfunc A() {}\n")
	r.write("new.go", "package a\n")
	// An include is one of the things sot leaves git config to read.
	r.git("config", "include.path", "absent.inc")

	calls := gittest.LogCalls(t)
	m := r.diff(DiffOptions{Untracked: true})
	if m.Base != head || m.Head != head || !m.Worktree {
		t.Errorf("base %s head %s worktree %v; want HEAD %s for both, from the work tree", m.Base, m.Head, m.Worktree, head)
	}
	if len(m.Files) != 2 {
		t.Errorf("files %v, want the changed and the untracked one", m.Paths())
	}
	b := calls()
	lines := strings.Split(strings.TrimSpace(b), "\n")
	count := func(s string) int {
		n := 0
		for _, c := range lines {
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

// A diff of a range resolves both of its ends with one git rev-parse,
// while git diffs.
func TestRangeEndsResolvedAtOnce(t *testing.T) {
	r := newRepo(t)
	r.write("a.go", "package a\n")
	base := r.commit("base")
	r.write("a.go", "package a\n\nfunc A() {}\n")
	head := r.commit("head")
	calls := gittest.LogCalls(t)
	m := r.diff(DiffOptions{Range: "HEAD~1..HEAD"})
	if m.Base != base || m.Head != head {
		t.Errorf("base %s head %s, want %s and %s", m.Base, m.Head, base, head)
	}
	if n := strings.Count(calls(), "rev-parse"); n != 1 {
		t.Errorf("git rev-parse ran %d times, want once (the range's ends; the work tree is found from its files):\n%s", n, calls())
	}
}
