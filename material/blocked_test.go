//go:build unix

package material

import (
	"context"
	"errors"
	"fmt"
	"os"
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
	old, oldWatch := blockedAfter, canWatch
	blockedAfter = 50 * time.Millisecond
	defer func() { blockedAfter, canWatch = old, oldWatch }()
	for _, watch := range []bool{true, false} {
		// Where git can be watched it is; elsewhere the work tree is walked.
		canWatch = func() bool { return watch && oldWatch() }
		for _, tc := range []struct {
			name, pipe string
			opts       DiffOptions
		}{
			{"a .gitattributes, diffing", ".gitattributes", DiffOptions{}},
			{"a .gitignore, listing the untracked files", "sub/.gitignore", DiffOptions{Untracked: true}},
		} {
			t.Run(fmt.Sprintf("%s, watched %v", tc.name, watch), func(t *testing.T) {
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
}

// A file the repository's configuration names, which whoever wrote the
// repository controls, would keep git waiting as long: a named pipe
// included as more configuration (every git command reads it), or given
// as the ignore file (the untracked listing reads it), and /dev/zero as
// the attributes file (its reading never ends; the linguist attributes
// are asked for). The diff stops and names the file.
func TestDiffStopsOnAFileTheConfigurationNames(t *testing.T) {
	for _, tc := range []struct {
		name, config, file string
		opts               DiffOptions
	}{
		{"an included configuration file", "[include]\n\tpath = %s\n", "pipe", DiffOptions{}},
		{"the ignore file", "[core]\n\texcludesFile = %s\n", "pipe", DiffOptions{Untracked: true}},
		{"/dev/zero as the attributes file", "[core]\n\tattributesFile = %s\n", "/dev/zero", DiffOptions{}},
		{"git's own output as the attributes file", "[core]\n\tattributesFile = %s\n", "/dev/stdout", DiffOptions{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRepo(t)
			r.write("a.go", "package a\n")
			r.commit("first")
			r.write("a.go", "package a\n\nfunc A() {}\n")
			r.write("new.go", "package a\n")
			file := tc.file
			if !filepath.IsAbs(file) {
				file = filepath.Join(t.TempDir(), file)
				if err := syscall.Mkfifo(file, 0o644); err != nil {
					t.Skip(err)
				}
			} else if _, err := os.Stat(file); err != nil {
				t.Skip(err)
			}
			f, err := os.OpenFile(filepath.Join(r.dir, ".git", "config"), os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(f, tc.config, file)
			f.Close()
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			o := tc.opts
			o.Dir = r.dir
			_, err = Diff(ctx, o)
			if !errors.Is(err, ErrBlockingFile) || !strings.Contains(err.Error(), file) {
				t.Fatalf("error %v; want ErrBlockingFile naming %s", err, file)
			}
		})
	}
}

// A file git tracks that the work tree holds as a named pipe cannot be
// compared: the review stops with an error that names the file and says
// how to restore it, which sot reports as the user's to fix.
func TestTrackedFileThatIsANamedPipe(t *testing.T) {
	r := newRepo(t)
	r.write("notes/a b.txt", "a\n")
	r.write("c.go", "package c\n")
	r.commit("first")
	name := filepath.Join(r.dir, "notes", "a b.txt")
	if err := os.Remove(name); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(name, 0o644); err != nil {
		t.Skip(err)
	}
	r.write("c.go", "package c\n\nfunc C() {}\n")
	_, err := Diff(t.Context(), DiffOptions{Dir: r.dir})
	if !errors.Is(err, ErrUnsupportedFile) {
		t.Fatalf("error %v; want ErrUnsupportedFile", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "notes/a b.txt is tracked") || !strings.Contains(msg, "git checkout -- 'notes/a b.txt'") {
		t.Errorf("the message must name the file and how to restore it: %s", msg)
	}
}
