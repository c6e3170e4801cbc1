package material

import (
	"errors"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sotlabs/sot/internal/gittest"
)

// A repository whose configuration names a program wherever git could run
// one (a filesystem monitor, a filter for every file, a text conversion,
// an external diff, a pager) has none run when its diff is taken: of the
// working tree (with untracked files), of the index, of a range, and the
// paths of a range. Whoever wrote the repository wrote its configuration.
func TestHostileGitConfigRunsNothing(t *testing.T) {
	r := newRepo(t)
	r.write("a.go", "package a\n")
	r.write("notes.txt", "a note\n")
	r.write(".gitattributes", "*.go diff=evil filter=evil\n*.txt filter=odd=name\n")
	r.commit("first")
	r.write("a.go", "package a\n\nvar Changed = 1\n")
	r.commit("second")
	out := t.TempDir()
	marker := filepath.Join(out, "ran")
	script := filepath.Join(out, "evil.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\ntouch "+marker+"\ncat\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(r.dir, ".git", "config"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.WriteString("[core]\n\tpager = " + script + "\n\tfsmonitor = " + script + "\n" +
		"[diff]\n\texternal = " + script + "\n" +
		"[diff \"evil\"]\n\ttextconv = " + script + "\n\tcommand = " + script + "\n" +
		"[filter \"evil\"]\n\tsmudge = " + script + "\n\tclean = " + script + "\n\tprocess = " + script + "\n" +
		"[filter \"odd=name\"]\n\tclean = " + script + "\n")
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	// Changes in the working tree, staged and not, and an untracked file.
	r.write("a.go", "package a\n\nvar Changed = 2\n")
	r.write("b.go", "package a\n\nvar B = 1\n")
	r.git("-c", "filter.evil.clean=", "-c", "filter.evil.process=", "-c", "core.fsmonitor=false", "add", "b.go")
	r.write("c.go", "package a\n")
	r.write("notes.txt", "a note, changed\n")
	os.Remove(marker) // git add above may have run nothing; start clean anyway
	for _, o := range []DiffOptions{{Untracked: true}, {Staged: true}, {Range: "HEAD~1..HEAD"}, {Range: "HEAD~1"}} {
		r.diff(o)
		if _, err := os.Stat(marker); err == nil {
			t.Fatalf("a diff (%+v) ran a program the repository's configuration names", o)
		}
	}
	if _, err := ChangedPaths(t.Context(), r.dir, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("listing the changed paths ran a program the repository's configuration names")
	}
}

// Only a git command known to read no file of the work tree goes without
// the repository's filter drivers switched off; every other command,
// including any this table does not name, gets them switched off.
func TestFilterFree(t *testing.T) {
	for _, tc := range []struct {
		args []string
		free bool
	}{
		{[]string{"rev-parse", "--show-toplevel", "--verify", "--quiet", "HEAD^{commit}"}, true},
		{[]string{"ls-tree", "-r", "--name-only", "-z", "HEAD", "--", ".sot/personas"}, true},
		{[]string{"check-attr", "-z", "--stdin", "linguist-generated"}, true},
		{[]string{"merge-base", "--is-ancestor", "a", "b"}, true},
		{[]string{"cat-file", "--batch"}, true},
		{[]string{"cat-file", "blob", "HEAD:a.go"}, true},
		{[]string{"cat-file", "--batch", "--filters"}, false},
		{[]string{"cat-file", "--textconv", "HEAD:a.go"}, false},
		{[]string{"cat-file", "--path=a.go", "blob", "abc"}, false},
		{[]string{"ls-files", "--others", "--exclude-standard", "-z", "--", ":/", "-m"}, true}, // after --, a path
		{[]string{"ls-files", "-z", "--cached", "--others", "--exclude-standard"}, true},
		{[]string{"ls-files", "-m"}, false},
		{[]string{"ls-files", "-z", "--modified"}, false},
		{[]string{"ls-files", "--deleted"}, false},
		{[]string{"-c", "core.quotepath=off", "diff", "HEAD"}, false},
		{[]string{"diff", "--name-only", "-z", "a..b", "--"}, false},
		{[]string{"hash-object", "-t", "tree", "--stdin"}, false},
		{[]string{"status"}, false},
		{[]string{"-c", "rev-parse=x", "status"}, false},
		{nil, false},
	} {
		if got := filterFree(tc.args); got != tc.free {
			t.Errorf("filterFree(%q) = %v, want %v", tc.args, got, tc.free)
		}
	}
}

// Finding the top of the work tree and listing the untracked files and
// the files at the base do not wait for git to list the repository's
// filter drivers: none of them reads a file of the work tree.
func TestListingsReadNoFilterList(t *testing.T) {
	r := newRepo(t)
	r.write("a.go", "package a\n")
	r.write(".sot/personas/p.md", "a persona\n")
	base := r.commit("first")
	r.write("b.go", "package a\n")
	calls := gittest.LogCalls(t)
	ctx := t.Context()
	if _, err := repoTop(ctx, r.dir); err != nil {
		t.Fatal(err)
	}
	if _, err := untracked(ctx, r.dir); err != nil {
		t.Fatal(err)
	}
	if _, err := FilesAtBase(ctx, r.dir, base, ".sot/personas"); err != nil {
		t.Fatal(err)
	}
	if b := calls(); strings.Contains(b, "--get-regexp") {
		t.Fatalf("git listed the filter drivers for commands that run none:\n%s", b)
	}
	// An include is one of the things sot leaves git to read.
	r.git("config", "include.path", "absent.inc")
	r.diff(DiffOptions{})
	if b := calls(); !strings.Contains(b, "--get-regexp") {
		t.Fatalf("the diff of the working tree ran without listing the filter drivers to switch off:\n%s", b)
	}
}

// A filter driver configured after a diff is switched off in the next
// one: what a process that lives on (sot mcp) learnt of a repository's
// configuration is not used again.
func TestFilterConfiguredBetweenDiffsIsSwitchedOff(t *testing.T) {
	r := newRepo(t)
	r.write("a.go", "package a\n")
	r.commit("first")
	r.write("a.go", "package a\n\nfunc A() {}\n")
	r.diff(DiffOptions{})
	marker := filepath.Join(t.TempDir(), "ran")
	r.write(".gitattributes", "*.go filter=evil\n")
	r.git("config", "filter.evil.clean", "touch "+marker+"; cat")
	r.write("a.go", "package a\n\nfunc A() { println() }\n")
	r.diff(DiffOptions{Untracked: true})
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the filter configured after the first diff ran in the second")
	}
}

// When git cannot list the repository's filter drivers (its git config
// fails), no command that could run one is started: the diff fails and
// the filter does not run. Before, the failure was taken for "no driver".
func TestFilterListThatFailsStopsTheDiff(t *testing.T) {
	r := newRepo(t)
	r.write("a.go", "package a\n")
	r.write(".gitattributes", "*.go filter=evil\n")
	r.commit("first")
	marker := filepath.Join(t.TempDir(), "ran")
	r.git("config", "filter.evil.clean", "touch "+marker+"; cat")
	// An include is one of the things sot leaves git to read, so git
	// config must answer.
	r.git("config", "include.path", "absent.inc")
	r.write("a.go", "package a\n\nfunc A() {}\n")
	real, err := exec.LookPath("git")
	if err != nil {
		t.Skip(err)
	}
	bin := t.TempDir()
	script := "#!/bin/sh\nif [ \"$1\" = config ]; then echo 'fatal: cannot fork' >&2; exit 128; fi\nexec '" + real + "' \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	_, err = Diff(t.Context(), DiffOptions{Dir: r.dir})
	if err == nil || !strings.Contains(err.Error(), "cannot fork") {
		t.Errorf("error %v; want git config's failure", err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the filter ran though its list could not be read")
	}
}

// A submodule's own configuration can define a filter driver, and git,
// to tell whether the submodule's work tree is dirty, runs git status in
// it, which runs the filter. The diff sot takes keeps out of submodules,
// and still shows one that moved to another commit.
func TestSubmoduleFilterDoesNotRun(t *testing.T) {
	inner := newRepo(t)
	inner.write("a.go", "package a\n")
	inner.write(".gitattributes", "*.go filter=evil\n")
	inner.commit("inner")
	r := newRepo(t)
	r.write("x.txt", "x\n")
	r.commit("outer")
	r.git("-c", "protocol.file.allow=always", "submodule", "add", "-q", inner.dir, "sub")
	r.commit("submodule")
	marker := filepath.Join(markDir(t), "ran")
	r.git("-C", "sub", "config", "filter.evil.clean", "touch "+marker+"; cat")
	touch := func() {
		later := time.Now().Add(2 * time.Second)
		if err := os.Chtimes(filepath.Join(r.dir, "sub", "a.go"), later, later); err != nil {
			t.Fatal(err)
		}
	}
	touch()
	r.git("diff", "HEAD", "--stat")
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("git diff did not run the submodule's filter, so the test tests nothing: %v", err)
	}
	os.Remove(marker)

	touch()
	r.write("x.txt", "x\ny\n")
	m := r.diff(DiffOptions{Untracked: true})
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the submodule's filter ran in sot's diff")
	}
	if got := m.Paths(); !slices.Equal(got, []string{"x.txt"}) {
		t.Errorf("paths %v; want x.txt", got)
	}

	// A submodule moved to another commit is still shown.
	inner.write("b.go", "package a\n")
	inner.commit("second")
	r.git("-C", "sub", "pull", "-q", "origin", "main")
	os.Remove(marker) // git pull, in the submodule, runs its filter itself
	touch()
	m = r.diff(DiffOptions{})
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the submodule's filter ran in sot's diff of a moved submodule")
	}
	if !slices.Contains(m.Paths(), "sub") {
		t.Errorf("paths %v; want the submodule that moved", m.Paths())
	}
}

// In a partial clone git fetches a missing object when it needs it, and
// the repository's configuration chooses how: for a file:// remote,
// remote.NAME.uploadpack is a shell command. sot's diff fetches nothing,
// and says how to fetch what is missing.
func TestPartialCloneFetchesNothing(t *testing.T) {
	src := newRepo(t)
	src.write("a.txt", "one\n")
	src.commit("one")
	src.write("a.txt", "two\n")
	src.commit("two")
	src.git("config", "uploadpack.allowFilter", "true")
	marker := filepath.Join(markDir(t), "ran")
	for _, tc := range []struct {
		name      string
		configure func(r *repo)
	}{
		{"upload-pack of a file:// remote", func(r *repo) {
			r.git("config", "remote.origin.uploadpack", "touch "+marker+"; git-upload-pack")
			r.git("config", "protocol.file.allow", "always")
		}},
		{"ext:: remote helper", func(r *repo) {
			r.git("config", "remote.origin.url", "ext::sh -c touch% "+marker)
			r.git("config", "protocol.ext.allow", "always")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clone := func() *repo {
				r := &repo{t: t, dir: t.TempDir()}
				r.git("clone", "-q", "--no-local", "--filter=blob:none", "--no-checkout", "file://"+src.dir, ".")
				tc.configure(r)
				return r
			}
			r := clone()
			exec.Command("git", "-C", r.dir, "diff", "--stat", "HEAD~1", "HEAD").Run()
			if _, err := os.Stat(marker); err != nil {
				t.Fatalf("git diff did not run the configured command, so the test tests nothing: %v", err)
			}
			os.Remove(marker)

			r = clone()
			_, err := Diff(t.Context(), DiffOptions{Dir: r.dir, Range: "HEAD~1..HEAD"})
			if _, serr := os.Stat(marker); serr == nil {
				t.Fatal("sot's diff ran the command the configuration chose to fetch with")
			}
			if !errors.Is(err, ErrBadRange) || !strings.Contains(err.Error(), "partial clone") {
				t.Errorf("error %v; want one saying the partial clone lacks objects", err)
			}
			// The lines of the new side, counted after the review, are
			// read without a fetch too.
			m := &Material{Type: TypeDiff, Top: r.dir}
			if got := m.NewSideLines(t.Context(), "HEAD:", false, []string{"a.txt"}); len(got) != 0 {
				t.Errorf("lines %v of a blob the clone lacks", got)
			}
			if _, serr := os.Stat(marker); serr == nil {
				t.Fatal("counting the new side's lines ran the command the configuration chose to fetch with")
			}
		})
	}
}

// NewSideLines counts a changed file's lines on the new side of the diff:
// in the work tree, the index or a revision. A link in the work tree is
// left out (TestPartialCloneFetchesNothing: so is a blob a partial clone
// lacks).
func TestNewSideLines(t *testing.T) {
	r := newRepo(t)
	r.write("a.go", "package a\n")
	r.write("b.go", "package b\n")
	r.commit("one")
	r.write("a.go", "package a\n\nfunc A() {}\n")
	r.write("b.go", "package b\n\nfunc B() {}\n\nfunc C() {}")
	r.commit("two")
	r.write("a.go", "package a\n")
	m := r.diff(DiffOptions{})
	if got := m.NewSideLines(t.Context(), "", true, []string{"a.go", "b.go"}); !maps.Equal(got, map[string]int{"a.go": 1, "b.go": 5}) {
		t.Errorf("work tree: %v", got)
	}
	if got := m.NewSideLines(t.Context(), "HEAD:", false, []string{"a.go", "b.go", "gone.go"}); !maps.Equal(got, map[string]int{"a.go": 3, "b.go": 5}) {
		t.Errorf("HEAD: %v", got)
	}
	os.Remove(filepath.Join(r.dir, "b.go"))
	if err := os.Symlink("/dev/zero", filepath.Join(r.dir, "b.go")); err != nil {
		t.Fatal(err)
	}
	if got := m.NewSideLines(t.Context(), "", true, []string{"a.go", "b.go"}); !maps.Equal(got, map[string]int{"a.go": 1}) {
		t.Errorf("with b.go a link to /dev/zero: %v", got)
	}
}

// markDir is a directory for the marker files a hostile command would
// leave. Its path goes into a configuration, so it is made outside the
// test's own directory, whose name (the test's) could hold a word that
// sends sot's reading of the configuration to git.
func markDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "sot-mark-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}
