package safedir

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const precious = "the victim's own bytes\n"

// victim writes a file outside every directory under test and returns its
// path; unchanged reports whether it still holds what it held.
func victim(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(p, []byte(precious), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func unchanged(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil || string(b) != precious {
		t.Errorf("the victim %s now holds %q (err %v); want it untouched", path, b, err)
	}
}

func wantSymlinkError(t *testing.T, err error, path string) {
	t.Helper()
	var se *SymlinkError
	if !errors.As(err, &se) || se.Path != path {
		t.Fatalf("err = %v; want a SymlinkError for %s", err, path)
	}
}

func names(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// Every way of writing into a Dir refuses a name that is a symlink, whether
// it points outside the directory, at another file inside it, or at a file
// that does not exist yet (which must not be created).
func TestFilesAreNeverReachedThroughASymlink(t *testing.T) {
	ops := []struct {
		name string
		do   func(d *Dir, name string) error
	}{
		{"append", func(d *Dir, name string) error {
			f, err := d.OpenFile(name, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
			if err == nil {
				f.WriteString("appended\n")
				f.Close()
			}
			return err
		}},
		{"create or truncate", func(d *Dir, name string) error {
			f, err := d.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
			if err == nil {
				f.Close()
			}
			return err
		}},
		{"open for a lock", func(d *Dir, name string) error {
			f, err := d.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
			if err == nil {
				f.WriteAt([]byte("1234\n"), 0)
				f.Close()
			}
			return err
		}},
		{"replace", func(d *Dir, name string) error { return d.WriteFile(name, []byte("new\n"), 0o644) }},
		{"read", func(d *Dir, name string) error { _, err := d.ReadFile(name); return err }},
	}
	links := []struct {
		name   string
		target func(t *testing.T, dir string) (link, watched string) // watched: a file that must stay as it was
	}{
		{"to a file outside", func(t *testing.T, dir string) (string, string) {
			v := victim(t)
			return v, v
		}},
		{"to another file inside", func(t *testing.T, dir string) (string, string) {
			inside := filepath.Join(dir, "other")
			os.WriteFile(inside, []byte(precious), 0o600)
			return "other", inside
		}},
		{"to a file not there yet", func(t *testing.T, dir string) (string, string) {
			return filepath.Join(t.TempDir(), "created-by-the-attack"), ""
		}},
	}
	for _, op := range ops {
		for _, l := range links {
			t.Run(op.name+" "+l.name, func(t *testing.T) {
				dir := t.TempDir()
				target, watched := l.target(t, dir)
				if err := os.Symlink(target, filepath.Join(dir, "run.json")); err != nil {
					t.Fatal(err)
				}
				d, err := Open("", dir)
				if err != nil {
					t.Fatal(err)
				}
				defer d.Close()
				wantSymlinkError(t, op.do(d, "run.json"), filepath.Join(dir, "run.json"))
				if watched != "" {
					unchanged(t, watched)
				} else if _, err := os.Lstat(target); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("%s was created through the link", target)
				}
			})
		}
	}
}

// Regular files are read, created, appended to, truncated and replaced as
// the os package would; replacing leaves no temporary file behind.
func TestFilesOfADir(t *testing.T) {
	dir := t.TempDir()
	d, err := Open("", dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for range 2 {
		f, err := d.OpenFile("journal", os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString("line\n")
		f.Close()
	}
	if b, err := d.ReadFile("journal"); err != nil || string(b) != "line\nline\n" {
		t.Fatalf("appended: %q, %v", b, err)
	}
	f, err := d.OpenFile("journal", os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if b, _ := d.ReadFile("journal"); len(b) != 0 {
		t.Fatalf("truncated journal holds %q", b)
	}
	for _, s := range []string{"first\n", "second\n"} {
		if err := d.WriteFile("REVIEW.md", []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "REVIEW.md")); string(b) != "second\n" {
		t.Fatalf("replaced file holds %q", b)
	}
	if err := d.Remove("journal"); err != nil {
		t.Fatal(err)
	}
	if got, want := names(t, dir), []string{"REVIEW.md"}; !slices.Equal(got, want) {
		t.Errorf("left %v, want %v", got, want)
	}
	if f, err := d.OpenFile("REVIEW.md", os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644); !errors.Is(err, fs.ErrExist) {
		if f != nil {
			f.Close()
		}
		t.Errorf("exclusive creation of an existing file: %v", err)
	}
}

// A temporary file of an earlier, predictable name is never followed: the
// names are random, so a link planted under the old name is left alone.
func TestReplacingIgnoresAPlantedTemporaryName(t *testing.T) {
	dir := t.TempDir()
	v := victim(t)
	os.Symlink(v, filepath.Join(dir, "REVIEW-SYNTHESIS.md.tmp"))
	d, err := Open("", dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := d.WriteFile("REVIEW-SYNTHESIS.md", []byte("synthesis\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	unchanged(t, v)
	links, err := d.Symlinks()
	if err != nil || len(links) != 1 || links[0].Path != filepath.Join(dir, "REVIEW-SYNTHESIS.md.tmp") || links[0].Target != v {
		t.Errorf("Symlinks() = %v, %v; want the planted link and its target", links, err)
	}
}

// Names are entries of the directory itself, never paths.
func TestOnlyPlainNames(t *testing.T) {
	d, err := Open("", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for _, name := range []string{"", ".", "..", "../x", "a/b", "/etc/passwd", `a\b`} {
		if err := d.WriteFile(name, []byte("x"), 0o644); err == nil || !strings.Contains(err.Error(), "not a plain file name") {
			t.Errorf("WriteFile(%q) = %v; want it refused", name, err)
		}
	}
}

// The path to a run's directory: below the trusted top no component may be
// a symlink, wherever it points, and nothing is created on the far side of
// one; above the top, and outside it, the user's own links are followed.
func TestOpenReachesTheDirectoryWithoutSymlinks(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, base string) // base holds "project" and "elsewhere"
		top   string                          // relative to base; "" for none
		dir   string                          // relative to base
		link  string                          // the symlink the error names, relative to base; "" when Open succeeds
	}{
		{"plain, created", nil, "project", "project/.sot/reviews/r1", ""},
		{"a parent links outside", func(t *testing.T, base string) {
			os.MkdirAll(filepath.Join(base, "project", ".sot"), 0o755)
			os.Symlink(filepath.Join(base, "elsewhere"), filepath.Join(base, "project", ".sot", "reviews"))
		}, "project", "project/.sot/reviews/r1", "project/.sot/reviews"},
		{"a parent links inside the project", func(t *testing.T, base string) {
			os.MkdirAll(filepath.Join(base, "project", "docs"), 0o755)
			os.Symlink("docs", filepath.Join(base, "project", ".sot"))
		}, "project", "project/.sot/reviews/r1", "project/.sot"},
		{"the directory itself links outside", func(t *testing.T, base string) {
			os.MkdirAll(filepath.Join(base, "project", ".sot", "reviews"), 0o755)
			os.Symlink(filepath.Join(base, "elsewhere"), filepath.Join(base, "project", ".sot", "reviews", "r1"))
		}, "project", "project/.sot/reviews/r1", "project/.sot/reviews/r1"},
		{"a link above the top is the user's", func(t *testing.T, base string) {
			os.MkdirAll(filepath.Join(base, "elsewhere", "real"), 0o755)
			os.Symlink(filepath.Join(base, "elsewhere", "real"), filepath.Join(base, "project", "checkout"))
		}, "project/checkout", "project/checkout/out", ""},
		{"outside the top, a link in the parents is followed", func(t *testing.T, base string) {
			os.Symlink(filepath.Join(base, "elsewhere"), filepath.Join(base, "tmp"))
		}, "project", "tmp/out", ""},
		{"outside the top, the directory itself may not link", func(t *testing.T, base string) {
			os.Symlink(filepath.Join(base, "elsewhere"), filepath.Join(base, "out"))
		}, "project", "out", "out"},
		{"no top, the directory itself may not link", func(t *testing.T, base string) {
			os.Symlink(filepath.Join(base, "elsewhere"), filepath.Join(base, "out"))
		}, "", "out", "out"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := t.TempDir()
			os.MkdirAll(filepath.Join(base, "project"), 0o755)
			os.MkdirAll(filepath.Join(base, "elsewhere"), 0o755)
			if tt.setup != nil {
				tt.setup(t, base)
			}
			top := ""
			if tt.top != "" {
				top = filepath.Join(base, tt.top)
			}
			dir := filepath.Join(base, filepath.FromSlash(tt.dir))
			checkErr := Check(top, dir)
			d, err := Open(top, dir)
			if tt.link == "" {
				if checkErr != nil || err != nil {
					t.Fatalf("Check: %v; Open: %v", checkErr, err)
				}
				defer d.Close()
				if err := d.WriteFile("run.json", []byte("{}\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				if _, err := os.Stat(filepath.Join(dir, "run.json")); err != nil {
					t.Fatal(err)
				}
				return
			}
			link := filepath.Join(base, filepath.FromSlash(tt.link))
			wantSymlinkError(t, checkErr, link)
			wantSymlinkError(t, err, link)
			if got := names(t, filepath.Join(base, "elsewhere")); len(got) != 0 {
				t.Errorf("created %v on the far side of the link", got)
			}
		})
	}
}

// Check creates nothing; Open creates what is missing.
func TestCheckCreatesNothing(t *testing.T) {
	top := t.TempDir()
	dir := filepath.Join(top, ".sot", "reviews", "r1")
	if err := Check(top, dir); err != nil {
		t.Fatal(err)
	}
	if got := names(t, top); len(got) != 0 {
		t.Fatalf("Check created %v", got)
	}
	d, err := Open(top, dir)
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		t.Fatalf("Open did not create %s: %v", dir, err)
	}
}

// A symlink is named as the caller named the directory: a relative path
// stays relative.
func TestSymlinkNamedAsGiven(t *testing.T) {
	base := t.TempDir()
	t.Chdir(base)
	os.MkdirAll(filepath.Join("project", ".sot"), 0o755)
	os.Symlink(t.TempDir(), filepath.Join("project", ".sot", "reviews"))
	err := Check("project", filepath.Join("project", ".sot", "reviews", "r1"))
	wantSymlinkError(t, err, filepath.Join("project", ".sot", "reviews"))
	if !strings.Contains(err.Error(), "project/.sot/reviews is a symlink to ") {
		t.Errorf("message %q", err)
	}
}
