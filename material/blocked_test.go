package material

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A named pipe where git reads attributes or ignore rules would keep git,
// and the review, waiting forever: the diff stops and says which file to
// remove.
func TestDiffStopsOnANamedPipeGitWouldWaitOn(t *testing.T) {
	old := blockedAfter
	blockedAfter = 50 * time.Millisecond
	defer func() { blockedAfter = old }()
	for _, tc := range []struct {
		name, pipe string
		opts       DiffOptions
	}{
		{"a .gitattributes, diffing", ".gitattributes", DiffOptions{}},
		{"a .gitignore, listing the untracked files", "sub/.gitignore", DiffOptions{Untracked: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRepo(t)
			r.write("a.go", "package a\n")
			r.write("sub/b.go", "package sub\n")
			r.commit("first")
			r.write("a.go", "package a\n\nfunc A() {}\n")
			if err := syscall.Mkfifo(filepath.Join(r.dir, filepath.FromSlash(tc.pipe)), 0o644); err != nil {
				t.Skip(err)
			}
			// Were it to wait, the test would end with the deadline's
			// error, not hang.
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			o := tc.opts
			o.Dir = r.dir
			_, err := Diff(ctx, o)
			if !errors.Is(err, ErrBlockingFile) || !strings.Contains(err.Error(), filepath.FromSlash(tc.pipe)) {
				t.Fatalf("error %v; want ErrBlockingFile naming %s", err, tc.pipe)
			}
		})
	}
}
