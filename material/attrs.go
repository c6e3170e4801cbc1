package material

import (
	"bytes"
	"errors"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
)

// attrSources says where git check-attr would read attributes for a
// repository, as far as sot can tell without running git: the files it
// reads besides the .gitattributes of the work tree.
type attrSources struct {
	top       string
	commonDir string // the repository's shared directory (its info/attributes)
	config    gitConfig
}

// linguistMayApply reports whether any attribute file git would read
// for paths (relative to top, slash-separated) could set linguist-generated
// or linguist-vendored: one that names "linguist" (in any case, so a
// macro that sets them is counted too) or that sot cannot read as plain
// text. When it reports false, no path has either attribute set, and the
// git check-attr that would say so need not run: most repositories set
// neither. diffOut is git's diff: a .gitattributes the change deletes or
// renames is read by git from the index, which sot does not read, so a
// diff that names one answers true, as does a sparse checkout.
func (s attrSources) linguistMayApply(paths []string, diffOut []byte) bool {
	if len(paths) == 0 {
		return false
	}
	if s.config.sparse || bytes.Contains(diffOut, []byte(".gitattributes")) {
		return true
	}
	for _, f := range s.outsideTree() {
		if namesLinguist(f, os.Stat) {
			return true
		}
	}
	// Each directory from the path's up to the top may hold a
	// .gitattributes that applies to it.
	seen := map[string]bool{}
	for _, p := range paths {
		if p == ".." || strings.HasPrefix(p, "../") || path.IsAbs(p) {
			return true // not under the top: sot cannot tell
		}
		for dir := path.Dir(p); !seen[dir]; dir = path.Dir(dir) {
			seen[dir] = true
			if namesLinguist(filepath.Join(s.top, filepath.FromSlash(dir), ".gitattributes"), os.Lstat) {
				return true
			}
		}
	}
	return false
}

// outsideTree lists the attribute files git reads besides the work
// tree's: the repository's info/attributes, the user's file
// (core.attributesFile, or git's default under the XDG configuration
// directory) and the system's (unless GIT_ATTR_NOSYSTEM is set). The
// system file's place is fixed when git is built: sot looks where git
// built with its default layout keeps it, beside the git found on the
// PATH and in /etc. A file sot cannot place is listed as "", which
// namesLinguist counts as naming it.
func (s attrSources) outsideTree() []string {
	files := []string{filepath.Join(s.commonDir, "info", "attributes")}
	if s.commonDir == "" {
		files[0] = ""
	}
	switch f := s.config.attributesFile; {
	case !s.config.attributesFileSet:
		if f := userGitFile("attributes"); f != "" {
			files = append(files, f)
		}
	case f == "":
	case strings.HasPrefix(f, "~/"):
		if home, err := os.UserHomeDir(); err == nil {
			files = append(files, filepath.Join(home, f[2:]))
		} else {
			files = append(files, "")
		}
	case filepath.IsAbs(f):
		files = append(files, f)
	default:
		files = append(files, "") // relative, ~user or %(prefix): sot cannot place it
	}
	if !envTrue(os.Getenv("GIT_ATTR_NOSYSTEM")) {
		files = append(files, systemFiles("gitattributes")...)
	}
	return files
}

// namesLinguist reports whether the attribute file name, as stat finds
// it, may set a linguist attribute: a missing file sets none; a regular
// file sets one only if "linguist" appears in it, in any case; anything
// else (a file sot cannot read, a link in the work tree, which git does
// not follow, a pipe, a file over 1 MiB, no name) counts as naming it.
func namesLinguist(name string, stat func(string) (os.FileInfo, error)) bool {
	if name == "" {
		return true
	}
	fi, err := stat(name)
	switch {
	case errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		return false
	case err != nil || !fi.Mode().IsRegular() || fi.Size() > 1<<20:
		return true
	}
	b, err := os.ReadFile(name)
	return err != nil || bytes.Contains(bytes.ToLower(b), []byte("linguist"))
}

// userGitFile is where git looks for the user's file name (attributes,
// ignore) when the configuration names none: under $XDG_CONFIG_HOME/git,
// or ~/.config/git, on every system; "" when there is neither.
func userGitFile(name string) string {
	if x := os.Getenv("XDG_CONFIG_HOME"); x != "" {
		return filepath.Join(x, "git", name)
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".config", "git", name)
	}
	return ""
}

// envTrue reports whether an environment variable's value is one git
// reads as true.
func envTrue(v string) bool {
	switch strings.ToLower(v) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}
