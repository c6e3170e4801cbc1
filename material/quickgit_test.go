package material

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/sotlabs/sot/internal/gittest"
)

func TestFilterNames(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       []string
		ok         bool
	}{
		{"empty", "", nil, true},
		{"no filter", "[user]\n\tname = A\n[core]\n\tbare = false\n", nil, true},
		{"plain header", "[filter \"lfs\"]\n\tclean = git-lfs clean -- %f\n\trequired = true\n", []string{"lfs"}, true},
		{"two headers, case kept", "[filter \"Evil\"]\n\tclean = x\n[FILTER \"b-2\"]\n\tsmudge = y\n", []string{"Evil", "b-2"}, true},
		{"setting on the header's line", "\t[filter \"x\"] clean = cat\r\n", []string{"x"}, true},
		{"old-style header", "[filter.evil]\n\tclean = x\n", nil, false},
		{"escaped name", "[filter \"ev\\\\il\"]\n\tclean = x\n", nil, false},
		{"no space before the name", "[filter\"evil\"]\n", nil, false},
		{"filter in a value", "[alias]\n\tf = log --diff-filter=A\n", nil, false},
		{"filter in a comment", "# no Filter here\n", nil, false},
		{"include", "[include]\n\tpath = other\n", nil, false},
		{"includeIf", "[includeIf \"gitdir:~/w/\"]\n\tpath = other\n", nil, false},
		{"attributes file", "[core]\n\tattributesFile = ~/.attrs\n", nil, false},
		{"sparse checkout", "[core]\n\tSparseCheckout = true\n", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := filepath.Join(t.TempDir(), "config")
			if err := os.WriteFile(f, []byte(tc.text), 0o600); err != nil {
				t.Fatal(err)
			}
			got, ok := filterNames(f, false)
			if ok != tc.ok || !slices.Equal(got, tc.want) {
				t.Errorf("filterNames = %q, %v; want %q, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
	t.Run("missing", func(t *testing.T) {
		if names, ok := filterNames(filepath.Join(t.TempDir(), "none", "config"), false); !ok || names != nil {
			t.Errorf("a missing file: %q, %v; want none, true", names, ok)
		}
	})
	t.Run("not plain", func(t *testing.T) {
		if _, ok := filterNames(t.TempDir(), false); ok {
			t.Error("a directory read as a configuration file")
		}
	})
	t.Run("too large", func(t *testing.T) {
		f := filepath.Join(t.TempDir(), "config")
		if err := os.WriteFile(f, []byte(strings.Repeat("# a comment line\n", 70000)), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, ok := filterNames(f, false); ok {
			t.Error("a file over 1 MiB read as a configuration file")
		}
	})
}

func TestQuietGitEnv(t *testing.T) {
	for _, tc := range []struct {
		env  []string
		want bool
	}{
		{[]string{"HOME=/h", "PATH=/bin"}, true},
		{[]string{"GIT_AUTHOR_NAME=a", "GIT_CONFIG_GLOBAL=/x", "GIT_CONFIG_NOSYSTEM=1", "GIT_SSL_CAINFO=/c", "GIT_TRACE=1"}, true},
		{[]string{"GIT_DIR=/elsewhere/.git"}, false},
		{[]string{"GIT_WORK_TREE=/w"}, false},
		{[]string{"GIT_COMMON_DIR=/c"}, false},
		{[]string{"GIT_CEILING_DIRECTORIES=/a"}, false},
		{[]string{"GIT_CONFIG_PARAMETERS='filter.x.clean'='cat'"}, false},
		{[]string{"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=filter.x.clean", "GIT_CONFIG_VALUE_0=cat"}, false},
		{[]string{"GIT_SOMETHING_NEW=1"}, false},
	} {
		if got := quietGitEnv(tc.env); got != tc.want {
			t.Errorf("quietGitEnv(%q) = %v, want %v", tc.env, got, tc.want)
		}
	}
}

func TestFindGitDir(t *testing.T) {
	r := newRepo(t)
	r.write("sub/deep/a.go", "package a\n")
	top, err := filepath.EvalSymlinks(r.dir)
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(top, ".git")
	for _, d := range []string{r.dir, filepath.Join(r.dir, "sub", "deep")} {
		if g, _, ok := findGitDir(d); !ok || g != want {
			t.Errorf("findGitDir(%s) = %s, %v; want %s", d, g, ok, want)
		}
	}
	// Reached through a link, the repository is the one git finds from
	// the physical directory.
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(filepath.Join(r.dir, "sub"), link); err != nil {
		t.Fatal(err)
	}
	if g, _, ok := findGitDir(link); !ok || g != want {
		t.Errorf("through a link: %s, %v; want %s", g, ok, want)
	}
	// git passes over a .git directory that is no repository and goes on
	// to the one above; sot leaves that to git.
	if err := os.MkdirAll(filepath.Join(r.dir, "sub", ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if g, _, ok := findGitDir(filepath.Join(r.dir, "sub", "deep")); ok {
		t.Errorf("an empty .git directory was taken for the repository: %s", g)
	}
	// A .git file (a linked worktree, a submodule) is left to git.
	other := t.TempDir()
	if err := os.WriteFile(filepath.Join(other, ".git"), []byte("gitdir: "+want+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if g, _, ok := findGitDir(other); ok {
		t.Errorf("a .git file was followed: %s", g)
	}
	// So is the inside of a repository directory.
	if g, _, ok := findGitDir(filepath.Join(r.dir, ".git", "refs")); ok {
		t.Errorf("inside .git: %s", g)
	}
}

// A filter driver, wherever git's configuration defines it, is switched
// off for the diff. Where sot can read the configuration itself it does,
// and the diff starts without waiting for git config; where it cannot,
// git config is asked.
func TestFilterInEveryConfigurationFileIsSwitchedOff(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the configuration is read without git on Linux only")
	}
	// The marker's path goes into the configuration: it must not itself
	// hold a word that sends the question to git.
	marks := markDir(t)
	const evil = "[filter \"evil\"]\n\tclean = touch MARK; cat\n"
	for i, tc := range []struct {
		name string
		// set writes the configuration for the repository in dir, with
		// home as the user's home directory.
		set        func(t *testing.T, dir, home, text string)
		text       string
		withoutGit bool
	}{
		{"repository", writeAt(".git/config"), evil, true},
		{"repository, header in capitals", writeAt(".git/config"), "[FILTER \"evil\"]\n\tclean = touch MARK; cat\n", true},
		{"worktree configuration", func(t *testing.T, dir, home, text string) {
			appendFile(t, filepath.Join(dir, ".git", "config"), "[core]\n\trepositoryformatversion = 1\n[extensions]\n\tworktreeConfig = true\n")
			writeAt(".git/config.worktree")(t, dir, home, text)
		}, evil, true},
		{"GIT_CONFIG_GLOBAL", func(t *testing.T, dir, home, text string) {
			f := filepath.Join(home, "global")
			appendFile(t, f, text)
			t.Setenv("GIT_CONFIG_GLOBAL", f)
		}, evil, true},
		{"GIT_CONFIG_GLOBAL relative, read from the repository", func(t *testing.T, dir, home, text string) {
			appendFile(t, filepath.Join(dir, "rel", "global"), text)
			t.Setenv("GIT_CONFIG_GLOBAL", filepath.Join("rel", "global"))
		}, evil, false},
		{"~/.gitconfig", func(t *testing.T, dir, home, text string) {
			unsetenv(t, "GIT_CONFIG_GLOBAL")
			appendFile(t, filepath.Join(home, ".gitconfig"), text)
		}, evil, true},
		{"XDG_CONFIG_HOME/git/config", func(t *testing.T, dir, home, text string) {
			unsetenv(t, "GIT_CONFIG_GLOBAL")
			t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, "xdg"))
			appendFile(t, filepath.Join(home, "xdg", "git", "config"), text)
		}, evil, true},
		{"GIT_CONFIG_SYSTEM", func(t *testing.T, dir, home, text string) {
			unsetenv(t, "GIT_CONFIG_NOSYSTEM")
			f := filepath.Join(home, "system")
			appendFile(t, f, text)
			t.Setenv("GIT_CONFIG_SYSTEM", f)
		}, evil, true},
		{"old-style header", writeAt(".git/config"), "[filter.evil]\n\tclean = touch MARK; cat\n", false},
		{"included file", func(t *testing.T, dir, home, text string) {
			f := filepath.Join(home, "more")
			appendFile(t, f, text)
			appendFile(t, filepath.Join(dir, ".git", "config"), "[include]\n\tpath = "+f+"\n")
		}, evil, false},
		{"GIT_CONFIG_PARAMETERS", func(t *testing.T, dir, home, text string) {
			t.Setenv("GIT_CONFIG_PARAMETERS", "'filter.evil.clean'='"+text+"'")
		}, "touch MARK; cat", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			marker := filepath.Join(marks, strconv.Itoa(i))
			r := newRepo(t)
			r.write(".gitattributes", "*.go filter=evil\n")
			r.write("a.go", "package a\n")
			r.commit("first")
			home := t.TempDir()
			t.Setenv("HOME", home)
			t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, "config"))
			tc.set(t, r.dir, home, strings.ReplaceAll(tc.text, "MARK", marker))
			r.write("a.go", "package a\n\nfunc A() {}\n")

			// git itself runs the filter: the configuration is in effect.
			r.git("diff", "HEAD", "--stat")
			if _, err := os.Stat(marker); err != nil {
				t.Fatalf("git diff did not run the filter, so the case tests nothing: %v", err)
			}
			os.Remove(marker)
			r.write("a.go", "package a\n\nfunc A() { println() }\n")

			calls := gittest.LogCalls(t)
			m := r.diff(DiffOptions{})
			if _, err := os.Stat(marker); err == nil {
				t.Fatal("the filter ran in sot's diff")
			}
			if diff := cmp.Diff([]string{"a.go"}, m.Paths()); diff != "" {
				t.Errorf("paths (-want +got):\n%s", diff)
			}
			if asked := strings.Contains(calls(), "--get-regexp"); asked == tc.withoutGit {
				t.Errorf("git config asked: %v; want %v:\n%s", asked, !tc.withoutGit, calls())
			}
		})
	}
}

// writeAt appends a configuration's text to the file at rel in the
// repository.
func writeAt(rel string) func(t *testing.T, dir, home, text string) {
	return func(t *testing.T, dir, home, text string) {
		appendFile(t, filepath.Join(dir, filepath.FromSlash(rel)), text)
	}
}

func appendFile(t *testing.T, name, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(name, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// unsetenv removes an environment variable for the rest of the test.
func unsetenv(t *testing.T, k string) {
	t.Setenv(k, "")
	os.Unsetenv(k)
}

// Where quickRepo answers from the repository's files, its answer is git
// rev-parse's; where the repository is laid out in a way it does not read
// as git does, it leaves the answer to git.
func TestQuickRepoAgreesWithGit(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the repository is read without git on Linux only")
	}
	for _, tc := range []struct {
		name string
		// set lays the repository out and returns the directory to ask
		// about.
		set   func(r *repo) string
		quick bool
	}{
		{"top", func(r *repo) string { r.commit("first"); return r.dir }, true},
		{"subdirectory", func(r *repo) string { r.commit("first"); return filepath.Join(r.dir, "sub", "deep") }, true},
		{"through a link", func(r *repo) string {
			r.commit("first")
			link := filepath.Join(r.t.TempDir(), "link")
			if err := os.Symlink(filepath.Join(r.dir, "sub"), link); err != nil {
				r.t.Fatal(err)
			}
			return link
		}, true},
		{"detached HEAD", func(r *repo) string {
			r.commit("first")
			r.write("b.go", "package a\n")
			r.commit("second")
			r.git("checkout", "-q", "--detach", "HEAD~1")
			return r.dir
		}, true},
		{"packed refs", func(r *repo) string {
			r.commit("first")
			r.git("pack-refs", "--all", "--prune")
			if _, err := os.Stat(filepath.Join(r.dir, ".git", "refs", "heads", "main")); err == nil {
				r.t.Fatal("the branch is still loose")
			}
			return r.dir
		}, true},
		{"no commit yet", func(r *repo) string { return r.dir }, true},
		{"a branch with no commit yet", func(r *repo) string {
			r.commit("first")
			r.git("pack-refs", "--all")
			r.git("symbolic-ref", "HEAD", "refs/heads/other")
			return r.dir
		}, true},
		{"work tree moved by core.worktree", func(r *repo) string {
			r.commit("first")
			r.git("config", "core.worktree", filepath.Join(r.dir, "sub"))
			return filepath.Join(r.dir, "sub")
		}, false},
		{"linked worktree", func(r *repo) string {
			r.commit("first")
			w := filepath.Join(r.t.TempDir(), "w")
			r.git("worktree", "add", "-q", w)
			return w
		}, false},
		{"branch that is a symbolic ref", func(r *repo) string {
			r.commit("first")
			r.git("branch", "x")
			r.git("checkout", "-q", "x")
			r.git("symbolic-ref", "refs/heads/main", "refs/heads/x")
			r.git("checkout", "-q", "main")
			return r.dir
		}, false},
		{"an empty branch file", func(r *repo) string {
			r.commit("first")
			if err := os.WriteFile(filepath.Join(r.dir, ".git", "refs", "heads", "main"), nil, 0o644); err != nil {
				r.t.Fatal(err)
			}
			return r.dir
		}, false},
		{"GIT_DIR", func(r *repo) string {
			r.commit("first")
			r.t.(*testing.T).Setenv("GIT_DIR", filepath.Join(r.dir, ".git"))
			return r.dir
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRepo(t)
			r.write("sub/deep/a.go", "package a\n")
			dir := tc.set(r)
			got, ok := quickRepo(t.Context(), dir)
			if ok != tc.quick {
				t.Fatalf("quickRepo answered: %v; want %v (%+v)", ok, tc.quick, got)
			}
			if !ok {
				return
			}
			want, err := askRepo(t.Context(), dir)
			if err != nil {
				t.Fatal(err)
			}
			// git names the shared directory relative to dir, or not.
			if fi, err := os.Stat(want.common); err != nil || !sameFile(t, fi, got.common) {
				t.Errorf("common directory %s; git's is %s", got.common, want.common)
			}
			got.common, want.common = "", ""
			if got != want {
				t.Errorf("quickRepo = %+v; git's answer is %+v", got, want)
			}
		})
	}
}

func sameFile(t *testing.T, fi os.FileInfo, name string) bool {
	other, err := os.Stat(name)
	return err == nil && os.SameFile(fi, other)
}

// A review of the working tree of a plain repository starts two git
// processes: the diff and the listing of untracked files. The top of the
// work tree, HEAD and the filter drivers are read from the repository's
// files.
func TestPlainReviewStartsTwoGitProcesses(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the repository is read without git on Linux only")
	}
	r := newRepo(t)
	r.write("a.go", "package a\n")
	head := r.commit("init")
	r.write("a.go", "package a\n\nfunc A() {}\n")
	r.write("new.go", "package a\n")
	calls := gittest.LogCalls(t)
	m := r.diff(DiffOptions{Untracked: true})
	if m.Base != head || m.Head != head || !m.Worktree || len(m.Files) != 2 {
		t.Errorf("base %s head %s worktree %v files %v; want HEAD %s, from the work tree, two files", m.Base, m.Head, m.Worktree, m.Paths(), head)
	}
	lines := strings.Split(strings.TrimSpace(calls()), "\n")
	var subs []string
	for _, l := range lines {
		subs = append(subs, subcommand(strings.Fields(l)))
	}
	slices.Sort(subs)
	if diff := cmp.Diff([]string{"diff", "ls-files"}, subs); diff != "" {
		t.Errorf("git commands (-want +got):\n%s\n%s", diff, calls())
	}
}
