package material

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// ProjectFiles lists the files a run in top may read, as slash paths
// relative to top: in a git work tree, the files git tracks and those it
// does not ignore, its .git directory, and the .sot directory; elsewhere,
// every file below top. A file whose name says it holds credentials
// (IsSecretName) is never listed, nor is anything below a directory skip
// approves (its slash path relative to top): sot's own outputs that a run
// never reads, or the user's cache. The files and directories named in
// also (slash paths relative to top: what a command names, such as its
// output directory) are listed whether git ignores them or not.
func ProjectFiles(ctx context.Context, top string, also []string, skip func(dir string) bool) ([]string, error) {
	keep := func(p string) bool {
		if IsSecretName(p) {
			return false
		}
		for d := path.Dir(p); d != "."; d = path.Dir(d) {
			if skip != nil && skip(d) {
				return false
			}
		}
		return true
	}
	var out []string
	walk := func(dir string) error {
		err := filepath.WalkDir(filepath.Join(top, dir), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, rerr := filepath.Rel(top, p)
			if rerr != nil {
				return rerr
			}
			rel = filepath.ToSlash(rel)
			if d.IsDir() {
				if rel != "." && skip != nil && skip(rel) {
					return fs.SkipDir
				}
				return nil
			}
			if d.Type().IsRegular() && !IsSecretName(rel) {
				out = append(out, rel)
			}
			return nil
		})
		if os.IsNotExist(err) {
			return nil
		}
		return err
	}
	if fi, err := os.Lstat(filepath.Join(top, ".git")); err != nil || !fi.IsDir() {
		return out, walk(".")
	}
	listed, err := runGit(ctx, top, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	if err != nil {
		// A .git that git does not take for a repository: every file.
		return out, walk(".")
	}
	for _, a := range also {
		if a == "." || strings.HasPrefix(a, "../") || strings.HasPrefix(a, ".git/") || a == ".git" {
			continue
		}
		if err := walk(a); err != nil {
			return nil, err
		}
	}
	for _, p := range bytes.Split(listed, []byte{0}) {
		s := string(p)
		if s != "" && !strings.HasPrefix(s, ".git/") && !strings.HasPrefix(s, ".sot/") && keep(s) {
			out = append(out, s)
		}
	}
	if err := walk(".git"); err != nil {
		return nil, err
	}
	return out, walk(".sot")
}
