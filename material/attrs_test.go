package material

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sotlabs/sot/internal/gittest"
)

// A file git marks linguist-generated through any of the attribute files
// it reads is skipped as generated, tracked or untracked: sot asks git
// whenever one of those files could set the attribute.
func TestLinguistAttributesFromEveryFileGitReads(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(r *repo, home string)
	}{
		{"the top .gitattributes", func(r *repo, _ string) {
			r.write(".gitattributes", "gen/** linguist-generated\n")
		}},
		{"a .gitattributes beside the files", func(r *repo, _ string) {
			r.write("gen/.gitattributes", "*.go linguist-generated\n")
		}},
		{"a macro that sets it", func(r *repo, _ string) {
			r.write(".gitattributes", "[attr]machine-made linguist-generated\ngen/** machine-made\n")
		}},
		{"the repository's info/attributes", func(r *repo, _ string) {
			r.write(".git/info/attributes", "gen/** linguist-generated\n")
		}},
		{"core.attributesFile", func(r *repo, home string) {
			f := filepath.Join(home, "attrs")
			if err := os.WriteFile(f, []byte("gen/** linguist-generated\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			r.git("config", "core.attributesFile", f)
		}},
		{"the user's attributes under XDG_CONFIG_HOME", func(r *repo, home string) {
			f := filepath.Join(home, "git", "attributes")
			os.MkdirAll(filepath.Dir(f), 0o755)
			if err := os.WriteFile(f, []byte("gen/** linguist-generated\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{"a .gitattributes the change deletes, which git reads from the index", func(r *repo, _ string) {
			r.write("gen/.gitattributes", "*.go linguist-generated\n")
			r.git("add", "gen/.gitattributes")
			r.git("commit", "-qm", "attributes")
			os.Remove(filepath.Join(r.dir, "gen", ".gitattributes"))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			t.Setenv("XDG_CONFIG_HOME", home)
			r := newRepo(t)
			r.write("gen/tracked.go", "package gen\n")
			r.write("main.go", "package main\n")
			r.commit("first")
			tc.setup(r, home)
			r.write("gen/tracked.go", "package gen\n\nvar A = 1\n")
			r.write("gen/untracked.go", "package gen\n\nvar B = 2\n")
			r.write("main.go", "package main\n\nfunc main() {}\n")
			m := r.diff(DiffOptions{Untracked: true})
			if got := m.Paths(); !slices.Contains(got, "main.go") || slices.ContainsFunc(got, func(p string) bool { return strings.HasSuffix(p, ".go") && p != "main.go" }) {
				t.Errorf("reviewed %q, want main.go and none of gen's Go files", got)
			}
			for _, p := range []string{"gen/tracked.go", "gen/untracked.go"} {
				if !slices.Contains(m.Skipped, Skipped{Path: p, Reason: reasonGenerated}) {
					t.Errorf("%s is not skipped as generated: %+v", p, m.Skipped)
				}
			}
		})
	}
}

// A diff in a repository where no attribute file names the linguist
// attributes asks git check-attr nothing: every file's answer would be
// that they are unset.
func TestNoLinguistAttributesNoCheckAttr(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	r := newRepo(t)
	r.write(".gitattributes", "*.sh text eol=lf\n")
	r.write("a.go", "package a\n")
	r.commit("first")
	r.write("a.go", "package a\n\nfunc A() {}\n")
	r.write("b.go", "package a\n")
	calls := gittest.LogCalls(t)
	m := r.diff(DiffOptions{Untracked: true})
	if got := m.Paths(); !slices.Equal(got, []string{"a.go", "b.go"}) {
		t.Errorf("reviewed %q, want a.go and b.go", got)
	}
	if b := calls(); strings.Contains(b, "check-attr") {
		t.Errorf("git check-attr ran, though no attribute file names a linguist attribute:\n%s", b)
	}
}

// One git check-attr answers for the files of the diff and the untracked
// ones together.
func TestOneCheckAttrForTheDiffAndTheUntrackedFiles(t *testing.T) {
	r := newRepo(t)
	r.write(".gitattributes", "gen/** linguist-generated\n")
	r.write("a.go", "package a\n")
	r.commit("first")
	r.write("a.go", "package a\n\nfunc A() {}\n")
	r.write("gen/b.go", "package gen\n")
	calls := gittest.LogCalls(t)
	m := r.diff(DiffOptions{Untracked: true})
	if got := m.Paths(); !slices.Equal(got, []string{"a.go"}) {
		t.Errorf("reviewed %q, want a.go alone", got)
	}
	if n := strings.Count(calls(), "check-attr"); n != 1 {
		t.Errorf("git check-attr ran %d times, want once", n)
	}
}

func TestLinguistMayApply(t *testing.T) {
	write := func(t *testing.T, name, body string) {
		os.MkdirAll(filepath.Dir(name), 0o755)
		if err := os.WriteFile(name, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name    string
		setup   func(t *testing.T, top, common string) gitConfig
		paths   []string
		diffOut string
		want    bool
	}{
		{"no attribute file", nil, []string{"a/b/c.go"}, "", false},
		{"no path", func(t *testing.T, top, _ string) gitConfig {
			write(t, filepath.Join(top, ".gitattributes"), "* linguist-generated\n")
			return gitConfig{}
		}, nil, "", false},
		{"attributes that name other things", func(t *testing.T, top, _ string) gitConfig {
			write(t, filepath.Join(top, ".gitattributes"), "*.sh text eol=lf\n")
			write(t, filepath.Join(top, "a", ".gitattributes"), "*.png binary\n")
			return gitConfig{}
		}, []string{"a/b/c.go"}, "", false},
		{"a .gitattributes on the way up", func(t *testing.T, top, _ string) gitConfig {
			write(t, filepath.Join(top, "a", ".gitattributes"), "* Linguist-Vendored\n")
			return gitConfig{}
		}, []string{"a/b/c.go"}, "", true},
		{"a .gitattributes in another directory", func(t *testing.T, top, _ string) gitConfig {
			write(t, filepath.Join(top, "x", ".gitattributes"), "* linguist-vendored\n")
			return gitConfig{}
		}, []string{"a/b/c.go", "y.go"}, "", false},
		{"a .gitattributes that is a link", func(t *testing.T, top, _ string) gitConfig {
			write(t, filepath.Join(top, "plain"), "* text\n")
			if err := os.Symlink("plain", filepath.Join(top, ".gitattributes")); err != nil {
				t.Skip(err)
			}
			return gitConfig{}
		}, []string{"c.go"}, "", true},
		{"a .gitattributes that is a directory", func(t *testing.T, top, _ string) gitConfig {
			os.MkdirAll(filepath.Join(top, ".gitattributes"), 0o755)
			return gitConfig{}
		}, []string{"c.go"}, "", true},
		{"info/attributes", func(t *testing.T, _, common string) gitConfig {
			write(t, filepath.Join(common, "info", "attributes"), "*.pb.go linguist-generated\n")
			return gitConfig{}
		}, []string{"c.go"}, "", true},
		{"core.attributesFile", func(t *testing.T, top, _ string) gitConfig {
			f := filepath.Join(t.TempDir(), "attrs")
			write(t, f, "*.pb.go linguist-generated\n")
			return gitConfig{attributesFile: f, attributesFileSet: true}
		}, []string{"c.go"}, "", true},
		{"core.attributesFile set, the default not read", func(t *testing.T, top, _ string) gitConfig {
			write(t, filepath.Join(os.Getenv("XDG_CONFIG_HOME"), "git", "attributes"), "* linguist-generated\n")
			return gitConfig{attributesFile: filepath.Join(t.TempDir(), "none"), attributesFileSet: true}
		}, []string{"c.go"}, "", false},
		{"the default user file", func(t *testing.T, top, _ string) gitConfig {
			write(t, filepath.Join(os.Getenv("XDG_CONFIG_HOME"), "git", "attributes"), "* linguist-generated\n")
			return gitConfig{}
		}, []string{"c.go"}, "", true},
		{"core.attributesFile relative", func(t *testing.T, top, _ string) gitConfig {
			return gitConfig{attributesFile: "attrs", attributesFileSet: true}
		}, []string{"c.go"}, "", true},
		{"a sparse checkout", func(t *testing.T, top, _ string) gitConfig {
			return gitConfig{sparse: true}
		}, []string{"c.go"}, "", true},
		{"a diff that names a .gitattributes", nil, []string{"c.go"}, "diff --git a/x/.gitattributes b/x/.gitattributes\ndeleted file mode 100644\n", true},
		{"a path outside the top", nil, []string{"../c.go"}, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("XDG_CONFIG_HOME", t.TempDir())
			t.Setenv("GIT_ATTR_NOSYSTEM", "1")
			top := t.TempDir()
			common := filepath.Join(top, ".git")
			var c gitConfig
			if tc.setup != nil {
				c = tc.setup(t, top, common)
			}
			s := attrSources{top: top, commonDir: common, config: c}
			if got := s.linguistMayApply(tc.paths, []byte(tc.diffOut)); got != tc.want {
				t.Errorf("linguistMayApply(%q) = %v, want %v", tc.paths, got, tc.want)
			}
		})
	}
}

func TestParseConfig(t *testing.T) {
	out := "filter.lfs.clean\ngit-lfs clean -- %f\x00filter.lfs.smudge\ngit-lfs smudge\x00filter.a.b.c.process\nx\x00core.attributesfile\n~/attrs\x00core.sparsecheckout\x00"
	c := parseConfig(out)
	if !slices.Equal(c.filters, []string{"lfs", "a.b.c"}) || c.attributesFile != "~/attrs" || !c.attributesFileSet || !c.sparse {
		t.Errorf("parseConfig = %+v", c)
	}
	if c := parseConfig("core.sparsecheckout\nfalse\x00"); c.sparse || c.attributesFileSet {
		t.Errorf("sparseCheckout false read as %+v", c)
	}
}
