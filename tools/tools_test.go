package tools

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sotlabs/sot/internal/secrets"
)

// token is a GitHub token the secret rules recognise; it is not a real one.
const token = "ghp_R7tQm2Xz9LpK4vWb8NcY1sHd6FjG3aUe5iOo"

// proj is a project in a temporary directory, with a directory outside
// it that symbolic links in the project point to.
type proj struct {
	t        *testing.T
	dir, out string
}

func newProject(t *testing.T) *proj {
	t.Helper()
	base := t.TempDir()
	p := &proj{t: t, dir: filepath.Join(base, "proj"), out: filepath.Join(base, "outside")}
	for _, d := range []string{p.dir, p.out} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

func (p *proj) write(name, content string) {
	p.t.Helper()
	f := filepath.Join(p.dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
		p.t.Fatal(err)
	}
	if err := os.WriteFile(f, []byte(content), 0o644); err != nil {
		p.t.Fatal(err)
	}
}

// links plants "out", a link to the outside directory, and "outfile", a
// link to a file in it, and fills the outside with text that must never
// come back.
func (p *proj) links() {
	p.t.Helper()
	if err := os.WriteFile(filepath.Join(p.out, "private.txt"), []byte("OUTSIDE-TEXT\n"), 0o644); err != nil {
		p.t.Fatal(err)
	}
	for link, target := range map[string]string{"out": p.out, "outfile": filepath.Join(p.out, "private.txt")} {
		if err := os.Symlink(target, filepath.Join(p.dir, link)); err != nil {
			p.t.Fatal(err)
		}
	}
}

// git runs git in the project for the test's own setup.
func (p *proj) git(args ...string) {
	p.t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=T", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main"}, args...)...)
	cmd.Dir = p.dir
	if out, err := cmd.CombinedOutput(); err != nil {
		p.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// repo makes the project a git repository with everything committed.
func (p *proj) repo() {
	p.t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		p.t.Skip("git is not installed")
	}
	p.git("init", "-q")
	p.commit("first")
}

func (p *proj) commit(msg string) {
	p.t.Helper()
	p.git("add", "-A")
	p.git("commit", "-q", "-m", msg)
}

func (p *proj) open(lim Limits) *Tools {
	p.t.Helper()
	tl, err := Open(p.dir, lim)
	if err != nil {
		p.t.Fatal(err)
	}
	p.t.Cleanup(func() { tl.Close() })
	return tl
}

func call(t *testing.T, tl *Tools, name, args string) (Result, error) {
	t.Helper()
	return tl.Call(context.Background(), name, json.RawMessage(args))
}

func TestPathsOutsideTheProjectAreRefused(t *testing.T) {
	p := newProject(t)
	p.write("a.go", "package a\n")
	p.repo()
	p.links()
	tl := p.open(Limits{})
	for _, tt := range []struct{ tool, args string }{
		{"read_file", `{"path":"outfile"}`},
		{"read_file", `{"path":"out/private.txt"}`},
		{"read_file", `{"path":"../outside/private.txt"}`},
		{"read_file", `{"path":"sub/../../outside/private.txt"}`},
		{"read_file", `{"path":"` + filepath.ToSlash(filepath.Join(p.out, "private.txt")) + `"}`},
		{"list_dir", `{"path":"out"}`},
		{"list_dir", `{"path":".."}`},
		{"git_log", `{"path":"out/private.txt"}`},
		{"git_log", `{"path":"../outside"}`},
		{"git_show", `{"path":"outfile","revision":"HEAD"}`},
		{"git_show", `{"path":"../outside/private.txt","revision":"HEAD"}`},
	} {
		r, err := call(t, tl, tt.tool, tt.args)
		if err == nil || !strings.Contains(err.Error(), "is outside the project") {
			t.Errorf("%s %s: err = %v, text %q; want a path outside the project", tt.tool, tt.args, err, r.Text)
		}
	}
	r, err := call(t, tl, "grep", `{"pattern":"OUTSIDE-TEXT"}`)
	if err != nil || strings.Contains(r.Text, "OUTSIDE-TEXT:") || strings.Contains(r.Text, "OUTSIDE-TEXT\n") || len(r.Files) != 0 {
		t.Errorf("grep followed a link out: %+v, %v", r, err)
	}
	r, err = call(t, tl, "list_dir", `{}`)
	if err != nil || !strings.Contains(r.Text, "out (symbolic link, not followed)") || strings.Contains(r.Text, "private.txt") {
		t.Errorf("list_dir = %q, %v; want the link named, not followed", r.Text, err)
	}
}

func TestSecretFilesAreRefused(t *testing.T) {
	p := newProject(t)
	p.write(".env", "PASSWORD=hunter2hunter2\n")
	p.write("deploy/id_rsa", "hunter2hunter2\n")
	p.write("cfg/.aws/credentials", "hunter2hunter2\n")
	p.write("main.go", "package main // hunter2hunter2\n")
	p.repo()
	tl := p.open(Limits{})
	for _, tt := range []struct{ tool, args string }{
		{"read_file", `{"path":".env"}`},
		{"read_file", `{"path":"deploy/id_rsa"}`},
		{"read_file", `{"path":"cfg/.aws/credentials"}`},
		{"git_show", `{"path":".env","revision":"HEAD"}`},
		{"git_show", `{"path":"deploy/id_rsa","revision":"HEAD"}`},
	} {
		if _, err := call(t, tl, tt.tool, tt.args); err == nil || !strings.Contains(err.Error(), "credentials file") {
			t.Errorf("%s %s: err = %v, want a credentials file refused", tt.tool, tt.args, err)
		}
	}
	r, err := call(t, tl, "grep", `{"pattern":"hunter2"}`)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(r.Files, []string{"main.go"}) || !strings.Contains(r.Text, "[3 files not searched") {
		t.Errorf("grep = %+v; want main.go only and 3 files not searched", r)
	}
}

func TestKeysComeBackMasked(t *testing.T) {
	p := newProject(t)
	p.write("conf/app.yaml", "name: app\ngithub_token: "+token+"\n")
	p.repo()
	tl := p.open(Limits{})
	for _, tt := range []struct{ tool, args string }{
		{"read_file", `{"path":"conf/app.yaml"}`},
		{"grep", `{"pattern":"github_token","glob":"**/*.yaml"}`},
		{"grep", `{"pattern":"ghp_R7"}`},
		{"git_show", `{"path":"conf/app.yaml","revision":"HEAD"}`},
	} {
		r, err := call(t, tl, tt.tool, tt.args)
		if err != nil {
			t.Fatalf("%s: %v", tt.tool, err)
		}
		if strings.Contains(r.Text, token) || strings.Contains(r.Text, token[8:]) {
			t.Errorf("%s %s returned the key:\n%s", tt.tool, tt.args, r.Text)
		}
		if tt.args != `{"pattern":"ghp_R7"}` && !strings.Contains(r.Text, secrets.Marker) {
			t.Errorf("%s %s: no mask in\n%s", tt.tool, tt.args, r.Text)
		}
	}
}

func TestReadFile(t *testing.T) {
	p := newProject(t)
	p.write("five.txt", "one\r\ntwo\nthree\nfour\nfive\n")
	p.write("bin.dat", "abc\x00def")
	p.write("latin1.txt", "caf\xe9\n")
	p.write(".git/config", "[core]\n")
	tl := p.open(Limits{MaxLines: 2})
	for _, tt := range []struct {
		args, want string
		cut        bool
	}{
		{`{"path":"five.txt","start":2,"end":3}`, "2: two\n3: three\n", false},
		{`{"path":"five.txt","start":4}`, "4: four\n5: five\n", false},
		{`{"path":"./five.txt","start":1}`, "1: one\n2: two\n[cut: showed lines 1–2 of 5; ask for lines from 3 on]\n", true},
	} {
		r, err := call(t, tl, "read_file", tt.args)
		if err != nil {
			t.Fatalf("%s: %v", tt.args, err)
		}
		if r.Text != tt.want || r.Cut != tt.cut || !slices.Equal(r.Files, []string{"five.txt"}) {
			t.Errorf("%s = %+v, want text %q, cut %v", tt.args, r, tt.want, tt.cut)
		}
	}
	for _, tt := range []struct{ args, want string }{
		{`{"path":"bin.dat"}`, "binary"},
		{`{"path":"latin1.txt"}`, "not UTF-8"},
		{`{"path":"five.txt","start":9}`, "has 5 lines"},
		{`{"path":"five.txt","start":3,"end":2}`, "bad line range"},
		{`{"path":"missing.txt"}`, "does not exist"},
		{`{"path":"."}`, "is a directory"},
		{`{"path":".git/config"}`, "inside .git"},
		{`{"path":"sub/.sot/run.json"}`, "inside .sot"},
	} {
		if _, err := call(t, tl, "read_file", tt.args); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want %q", tt.args, err, tt.want)
		}
	}
	tl = p.open(Limits{MaxBytes: 14})
	if r, _ := call(t, tl, "read_file", `{"path":"five.txt"}`); !r.Cut || !strings.HasPrefix(r.Text, "1: one\n2: two\n[cut") {
		t.Errorf("byte cap: %+v", r)
	}
}

func TestGrep(t *testing.T) {
	p := newProject(t)
	p.write("a.go", "package a\n// TODO one\n// TODO two\n")
	p.write("sub/deep/b.go", "package b\n// TODO three\n")
	p.write("sub/c.txt", "TODO four\n")
	p.write("img.png", "TODO\x00binary")
	p.write(".git/notes", "TODO in git\n")
	p.write(".sot/run.json", "TODO in sot\n")
	tl := p.open(Limits{})
	for _, tt := range []struct {
		glob  string
		files []string
	}{
		{"", []string{"a.go", "sub/c.txt", "sub/deep/b.go"}},
		{"**/*.go", []string{"a.go", "sub/deep/b.go"}},
		{"*.go", []string{"a.go"}},
		{"sub/**", []string{"sub/c.txt", "sub/deep/b.go"}},
		{"sub/*/*.go", []string{"sub/deep/b.go"}},
		{"nothing/**", nil},
	} {
		args, _ := json.Marshal(map[string]string{"pattern": "TODO", "glob": tt.glob})
		r, err := call(t, tl, "grep", string(args))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(r.Files, tt.files) || r.Cut {
			t.Errorf("glob %q: files %q, cut %v, want %q\n%s", tt.glob, r.Files, r.Cut, tt.files, r.Text)
		}
	}
	r, _ := call(t, tl, "grep", `{"pattern":"TODO (one|three)"}`)
	if want := "a.go:2: // TODO one\nsub/deep/b.go:2: // TODO three\n[1 files not searched"; !strings.HasPrefix(r.Text, want) {
		t.Errorf("grep text = %q, want it to start %q", r.Text, want)
	}
	r, _ = p.open(Limits{MaxMatches: 2}).Call(context.Background(), "grep", json.RawMessage(`{"pattern":"TODO"}`))
	if !r.Cut || strings.Count(r.Text, "TODO") != 2 || !strings.Contains(r.Text, "stopped at 2 matches") {
		t.Errorf("match cap: %+v", r)
	}
	r, _ = p.open(Limits{MaxFiles: 1}).Call(context.Background(), "grep", json.RawMessage(`{"pattern":"TODO"}`))
	if !r.Cut || !strings.Contains(r.Text, "stopped after reading 1 files") {
		t.Errorf("file cap: %+v", r)
	}
	for _, args := range []string{`{"pattern":"("}`, `{"pattern":"x","glob":"[a"}`} {
		if _, err := call(t, tl, "grep", args); err == nil {
			t.Errorf("%s: no error", args)
		}
	}
}

func TestListDir(t *testing.T) {
	p := newProject(t)
	p.write("b.txt", "")
	p.write("a/x.go", "")
	p.write("c.txt", "")
	r, err := call(t, p.open(Limits{}), "list_dir", `{"path":""}`)
	if err != nil || r.Text != "a/\nb.txt\nc.txt\n" || r.Cut {
		t.Errorf("list_dir = %+v, %v", r, err)
	}
	r, _ = call(t, p.open(Limits{MaxLines: 2}), "list_dir", `{}`)
	if !r.Cut || r.Text != "a/\nb.txt\n[cut: showed 2 of 3 entries]\n" {
		t.Errorf("capped list_dir = %+v", r)
	}
}

func TestGitLogAndShow(t *testing.T) {
	p := newProject(t)
	p.write("a.go", "package a\n\nvar V = 1\n")
	p.repo()
	p.write("a.go", "package a\n\nvar V = 2\n")
	p.commit("second")
	tl := p.open(Limits{})
	r, err := call(t, tl, "git_log", `{"path":"a.go"}`)
	if err != nil || strings.Count(r.Text, "\n") != 2 || !strings.Contains(r.Text, "T: second") || r.Cut {
		t.Errorf("git_log = %+v, %v", r, err)
	}
	r, _ = call(t, tl, "git_log", `{"path":"a.go","max":1}`)
	if !r.Cut || !strings.Contains(r.Text, "T: second\n[cut: showed the 1 newest commits]") {
		t.Errorf("capped git_log = %+v", r)
	}
	r, err = call(t, tl, "git_show", `{"path":"a.go","revision":"HEAD~1","start":3}`)
	if err != nil || r.Text != "3: var V = 1\n" || !slices.Equal(r.Files, []string{"a.go"}) {
		t.Errorf("git_show = %+v, %v", r, err)
	}
	if _, err := call(t, tl, "git_show", `{"path":"none.go","revision":"HEAD"}`); err == nil || !strings.Contains(err.Error(), "not a file at HEAD") {
		t.Errorf("missing file: %v", err)
	}
}

func TestBadRevisionsAreRefused(t *testing.T) {
	p := newProject(t)
	p.write("a.go", "package a\n")
	p.repo()
	tl := p.open(Limits{})
	for _, rev := range []string{"", "-p", "--output=/tmp/x", "HEAD;touch x", "HEAD x", "HEAD:a.go", "$(id)", "nosuchbranch"} {
		args, _ := json.Marshal(map[string]string{"path": "a.go", "revision": rev})
		if r, err := call(t, tl, "git_show", string(args)); err == nil {
			t.Errorf("revision %q: no error, text %q", rev, r.Text)
		}
	}
	for _, rev := range []string{"HEAD", "main", "HEAD~0", "HEAD^{commit}", "main@{0}"} {
		args, _ := json.Marshal(map[string]string{"path": "a.go", "revision": rev})
		if _, err := call(t, tl, "git_show", string(args)); err != nil {
			t.Errorf("revision %q: %v", rev, err)
		}
	}
}

// TestHostileGitConfigRunsNothing gives the repository a configuration
// that names a program wherever git could run one; no tool may run it.
func TestHostileGitConfigRunsNothing(t *testing.T) {
	p := newProject(t)
	p.write("a.go", "package a\n")
	p.write(".gitattributes", "*.go diff=evil filter=evil\n")
	p.repo()
	p.write("a.go", "package a\n\nvar Changed = 1\n")
	p.commit("second")
	marker := filepath.Join(p.out, "ran")
	script := filepath.Join(p.out, "evil.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\ntouch "+marker+"\ncat\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(p.dir, ".git", "config"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.WriteString("[core]\n\tpager = " + script + "\n\tfsmonitor = " + script + "\n" +
		"[diff]\n\texternal = " + script + "\n" +
		"[diff \"evil\"]\n\ttextconv = " + script + "\n" +
		"[filter \"evil\"]\n\tsmudge = " + script + "\n\tclean = " + script + "\n" +
		"[log]\n\tshowSignature = true\n[gpg]\n\tprogram = " + script + "\n")
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	tl := p.open(Limits{})
	for _, tt := range []struct{ tool, args string }{
		{"git_log", `{"path":"a.go"}`},
		{"git_log", `{"path":"."}`},
		{"git_show", `{"path":"a.go","revision":"HEAD~1"}`},
		{"git_show", `{"path":"a.go","revision":"HEAD"}`},
		{"read_file", `{"path":"a.go"}`},
		{"grep", `{"pattern":"package"}`},
	} {
		if _, err := call(t, tl, tt.tool, tt.args); err != nil {
			t.Errorf("%s %s: %v", tt.tool, tt.args, err)
		}
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("a program the repository's configuration names was run")
	}
}

func TestCallArgumentErrors(t *testing.T) {
	tl := newProject(t).open(Limits{})
	for _, tt := range []struct{ tool, args, want string }{
		{"rm", `{}`, `there is no tool "rm"; the tools are read_file, grep, list_dir, git_log, git_show`},
		{"read_file", `{}`, `read_file: missing argument "path" (string); expected path (string), [start (integer)], [end (integer)]`},
		{"read_file", `{"path":3}`, `argument "path" must be a string, not 3`},
		{"read_file", `{"path":"a","start":"1"}`, `argument "start" must be an integer, not "1"`},
		{"read_file", `{"path":"a","start":1.5}`, `argument "start" must be an integer`},
		{"read_file", `{"path":"a","lines":"1-2"}`, `unknown argument "lines"`},
		{"grep", `["TODO"]`, `grep: the arguments must be a JSON object`},
		{"git_show", `{"path":"a"}`, `missing argument "revision"`},
	} {
		_, err := call(t, tl, tt.tool, tt.args)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s %s: err = %v, want %q", tt.tool, tt.args, err, tt.want)
		}
	}
}

func TestSpecsMatchCall(t *testing.T) {
	tl := newProject(t).open(Limits{})
	for _, s := range Specs() {
		if s.Description == "" || s.Parameters["type"] != "object" {
			t.Errorf("%s: spec %+v", s.Name, s)
		}
		if _, err := json.Marshal(s.Parameters); err != nil {
			t.Errorf("%s: schema does not marshal: %v", s.Name, err)
		}
		if _, err := call(t, tl, s.Name, `{}`); err != nil && strings.Contains(err.Error(), "there is no tool") {
			t.Errorf("spec %s names no tool", s.Name)
		}
	}
}

// In a partial clone, git fetches an object it lacks by a program the
// repository's configuration chooses (for a file:// remote, its
// uploadpack, run by the shell). A look fetches nothing.
func TestPartialCloneFetchesNothingForALook(t *testing.T) {
	src := newProject(t)
	src.write("a.go", "package a\n")
	src.repo()
	src.write("a.go", "package a\n\nvar B = 1\n")
	src.commit("second")
	src.git("config", "uploadpack.allowFilter", "true")
	marker := filepath.Join(src.out, "ran")
	clone := func() string {
		dir := filepath.Join(t.TempDir(), "clone")
		for _, args := range [][]string{
			{"clone", "-q", "--no-local", "--filter=blob:none", "--no-checkout", "file://" + src.dir, dir},
			{"-C", dir, "config", "remote.origin.uploadpack", "touch " + marker + "; git-upload-pack"},
			{"-C", dir, "config", "protocol.file.allow", "always"},
		} {
			if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
				t.Fatalf("git %v: %v\n%s", args, err, out)
			}
		}
		return dir
	}
	exec.Command("git", "-C", clone(), "cat-file", "blob", "HEAD~1:a.go").Run()
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("git did not run the configured command, so the test tests nothing: %v", err)
	}
	os.Remove(marker)

	tl, err := Open(clone(), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer tl.Close()
	if _, err := call(t, tl, "git_show", `{"path":"a.go","revision":"HEAD~1"}`); err == nil {
		t.Error("git_show of a blob the clone lacks succeeded")
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("a look ran the command the configuration chose to fetch with")
	}
}
