package project

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ErrLinkOutside means a path given as material leads through a symbolic
// link inside a project to a place outside that project.
var ErrLinkOutside = errors.New("symbolic link out of the project")

// LinkError is a path that leads through a symbolic link out of the
// project it lies in. It wraps ErrLinkOutside.
type LinkError struct {
	// Path is the path as given.
	Path string
	// Link is the symbolic link on the way, Target where it leads, Top the
	// project's top.
	Link, Target, Top string
}

func (e *LinkError) Error() string {
	link := FromWorkDir(e.Link)
	return fmt.Sprintf("%s: %s is a symbolic link to %s, outside the project %s; sot does not follow links out of the project, because a repository could point one at your own files: name %s itself, or pass --follow-symlinks if you mean it",
		e.Path, link, e.Target, e.Top, e.Target)
}

func (e *LinkError) Unwrap() error { return ErrLinkOutside }

// CheckLinks returns a *LinkError when path, which lies in a project, leads
// through a symbolic link out of that project; nil when it stays inside,
// lies in no project, or does not exist (reading it reports that). A link
// inside the project to elsewhere in the project is fine: it is read as
// what it points to.
func CheckLinks(path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil
	}
	fi, err := os.Lstat(abs)
	if err != nil {
		return nil
	}
	dir := filepath.Dir(abs)
	if fi.IsDir() {
		dir = abs
	}
	top, ok := Top(dir)
	if !ok {
		return nil
	}
	if link, target := LinkOutside(top, abs); link != "" {
		return &LinkError{Path: path, Link: link, Target: target, Top: top}
	}
	return nil
}

// LinkOutside returns, for the absolute path abs in the project whose top
// is top, the symbolic link on the way from top to abs that points outside
// the project, and where it points; "" when abs stays in the project, or
// top is "" (a path in no project).
func LinkOutside(top, abs string) (link, target string) {
	if top == "" {
		return "", ""
	}
	resolved, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", "" // a broken link: reading it reports the error
	}
	if _, ok := withinResolved(top, resolved); ok {
		return "", ""
	}
	rel, ok := Within(top, abs)
	if !ok {
		return "", ""
	}
	cur := top
	for _, c := range strings.Split(rel, string(filepath.Separator)) {
		cur = filepath.Join(cur, c)
		if fi, err := os.Lstat(cur); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			continue
		}
		if t, err := filepath.EvalSymlinks(cur); err == nil {
			if _, ok := withinResolved(top, t); !ok {
				return cur, t
			}
		}
	}
	return abs, resolved
}

// withinResolved is Within, trying the top with its own links resolved
// too (a project under /tmp, which is a link on some systems).
func withinResolved(top, p string) (string, bool) {
	if rel, ok := Within(top, p); ok {
		return rel, true
	}
	if t, err := filepath.EvalSymlinks(top); err == nil {
		return Within(t, p)
	}
	return "", false
}

// OpenInput opens a file the user named as material (a passage, a
// questions file, an ensemble) after CheckLinks, unless follow is set
// (--follow-symlinks).
func OpenInput(path string, follow bool) (*os.File, error) {
	if !follow {
		if err := CheckLinks(path); err != nil {
			return nil, err
		}
	}
	return os.Open(path)
}

// ReadInput reads a file the user named as material, as OpenInput opens
// it.
func ReadInput(path string, follow bool) ([]byte, error) {
	f, err := OpenInput(path, follow)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err == nil && fi.IsDir() {
		return nil, fmt.Errorf("%s is a directory; name a file", path)
	}
	return io.ReadAll(f)
}
