package material

import (
	"context"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

func TestMain(m *testing.M) {
	// Tests create real repositories; make them independent of the
	// machine's git configuration and identity.
	for k, v := range map[string]string{
		"GIT_AUTHOR_NAME":     "Sot Test",
		"GIT_AUTHOR_EMAIL":    "sot@example.com",
		"GIT_COMMITTER_NAME":  "Sot Test",
		"GIT_COMMITTER_EMAIL": "sot@example.com",
		"GIT_CONFIG_GLOBAL":   os.DevNull,
		"GIT_CONFIG_NOSYSTEM": "1",
	} {
		os.Setenv(k, v)
	}
	flag.Parse()
	os.Exit(m.Run())
}

// repo is a git repository in a temporary directory.
type repo struct {
	t   testing.TB
	dir string
}

func newRepo(t testing.TB) *repo {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	r := &repo{t: t, dir: t.TempDir()}
	r.git("-c", "init.defaultBranch=main", "init", "-q")
	return r
}

func (r *repo) git(args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = r.dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func (r *repo) write(path, content string) {
	r.t.Helper()
	name := filepath.Join(r.dir, filepath.FromSlash(path))
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

func (r *repo) remove(path string) {
	r.t.Helper()
	if err := os.Remove(filepath.Join(r.dir, filepath.FromSlash(path))); err != nil {
		r.t.Fatal(err)
	}
}

// mv renames a file with git mv.
func (r *repo) mv(from, to string) {
	r.t.Helper()
	if err := os.MkdirAll(filepath.Join(r.dir, filepath.Dir(filepath.FromSlash(to))), 0o755); err != nil {
		r.t.Fatal(err)
	}
	r.git("mv", from, to)
}

// commit stages everything and commits it; it returns the commit id.
func (r *repo) commit(msg string) string {
	r.t.Helper()
	r.git("add", "-A")
	r.git("commit", "-q", "-m", msg)
	return r.git("rev-parse", "HEAD")
}

func (r *repo) diff(o DiffOptions) *Material {
	r.t.Helper()
	o.Dir = r.dir
	m, err := Diff(context.Background(), o)
	if err != nil {
		r.t.Fatalf("Diff(%+v): %v", o, err)
	}
	return m
}

// lines numbers n lines "line i" of a file, with a prefix.
func lines(prefix string, from, to int) string {
	var b strings.Builder
	for i := from; i <= to; i++ {
		b.WriteString(prefix)
		b.WriteString(" ")
		b.WriteString(strconv.Itoa(i))
		b.WriteByte('\n')
	}
	return b.String()
}

func skippedMap(m *Material) map[string]string {
	out := make(map[string]string)
	for _, s := range m.Skipped {
		out[s.Path] = s.Reason
	}
	return out
}
