// Package safedir is a directory a run owns, opened so that nothing created,
// appended, locked, replaced or removed in it follows a symlink.
//
// The directories sot writes into often lie inside a repository someone
// else wrote, and a symlink committed there (a run.json that points at
// ~/.bashrc, or a .sot/reviews that points outside the project) would
// otherwise send a run's writes wherever the link points. A Dir is reached
// from a trusted top without passing through a symlink, held open as an
// os.Root, and refuses every name in it that is a symlink; temporary files
// get unpredictable names, are created exclusively and are renamed into
// place inside the directory.
package safedir

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// SymlinkError reports a symlink where a run's directory allows none: on the
// way from the trusted top down to the directory, or inside it.
type SymlinkError struct {
	Path   string // the link, named from the path the directory was given as
	Target string // what the link points to; "" when it could not be read
}

func (e *SymlinkError) Error() string {
	if e.Target == "" {
		return e.Path + " is a symlink"
	}
	return fmt.Sprintf("%s is a symlink to %s", e.Path, e.Target)
}

// Dir is an open directory whose files are never reached through a
// symlink. It is safe for concurrent use.
type Dir struct {
	root *os.Root
	path string
}

// Open opens dir for a run, creating it and its missing parents (mode 0755
// before the umask). When dir lies inside top, every component below top,
// dir included, must be a directory and not a symlink: those components are
// reached one at a time, each checked before it is entered. When top is ""
// or dir lies elsewhere, only dir itself must not be a symlink. top itself,
// and whatever lies above it, is the user's own layout and is trusted.
// Paths are compared as written, after making them absolute.
func Open(top, dir string) (*Dir, error) {
	root, err := reach(top, dir, true)
	if err != nil {
		return nil, err
	}
	return &Dir{root: root, path: dir}, nil
}

// Check makes Open's checks of the path without creating or opening
// anything: components that do not exist yet pass, as Open would create
// them.
func Check(top, dir string) error {
	root, err := reach(top, dir, false)
	if root != nil {
		root.Close()
	}
	return err
}

// reach opens dir as Open describes. Without create it stops at the first
// missing component and returns a nil root.
func reach(top, dir string, create bool) (*os.Root, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	rel, inside := below(top, abs)
	if !inside {
		return reachAlone(dir, abs, create)
	}
	absTop, err := filepath.Abs(top)
	if err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(absTop)
	if err != nil {
		return nil, err
	}
	if rel == "." {
		return root, nil
	}
	parts := strings.Split(rel, string(filepath.Separator))
	for i, part := range parts {
		// How dir names this component, for messages: dir without the
		// components that follow it.
		shown := dir
		for range len(parts) - 1 - i {
			shown = filepath.Dir(shown)
		}
		fi, err := root.Lstat(part)
		if errors.Is(err, fs.ErrNotExist) {
			if !create {
				root.Close()
				return nil, nil
			}
			if err := root.Mkdir(part, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
				root.Close()
				return nil, err
			}
			fi, err = root.Lstat(part)
		}
		if err != nil {
			root.Close()
			return nil, err
		}
		next, err := enter(root, part, shown, fi)
		root.Close()
		if err != nil {
			return nil, err
		}
		root = next
	}
	return root, nil
}

// reachAlone opens a directory outside any trusted top: only the directory
// itself is checked.
func reachAlone(dir, abs string, create bool) (*os.Root, error) {
	if create {
		if err := os.MkdirAll(abs, 0o755); err != nil {
			return nil, err
		}
	}
	fi, err := os.Lstat(abs)
	if errors.Is(err, fs.ErrNotExist) && !create {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		target, _ := os.Readlink(abs)
		return nil, &SymlinkError{Path: dir, Target: target}
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%s is not a directory", dir)
	}
	root, err := os.OpenRoot(abs)
	if err != nil {
		return nil, err
	}
	return verified(root, dir, fi)
}

// enter opens the directory name of parent, which fi (from Lstat) describes.
func enter(parent *os.Root, name, shown string, fi fs.FileInfo) (*os.Root, error) {
	if fi.Mode()&fs.ModeSymlink != 0 {
		target, _ := parent.Readlink(name)
		return nil, &SymlinkError{Path: shown, Target: target}
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%s is not a directory", shown)
	}
	root, err := parent.OpenRoot(name)
	if err != nil {
		return nil, err
	}
	return verified(root, shown, fi)
}

// verified makes sure that root is the directory that was checked, not a
// symlink put in its place in the meantime.
func verified(root *os.Root, shown string, checked fs.FileInfo) (*os.Root, error) {
	fi, err := root.Stat(".")
	if err != nil {
		root.Close()
		return nil, err
	}
	if !os.SameFile(fi, checked) {
		root.Close()
		return nil, fmt.Errorf("%s changed while it was being opened", shown)
	}
	return root, nil
}

// below returns abs relative to top when top is set and abs lies inside it.
func below(top, abs string) (string, bool) {
	if top == "" {
		return "", false
	}
	absTop, err := filepath.Abs(top)
	if err != nil {
		return "", false
	}
	rel, err := filepath.Rel(absTop, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return rel, true
}

// Path is the directory as it was given to Open.
func (d *Dir) Path() string { return d.path }

// Close releases the directory. Files opened from it stay open.
func (d *Dir) Close() error { return d.root.Close() }

// Symlinks lists the symlinks in the directory, sorted by name. A run
// creates none, so any there were put by someone else.
func (d *Dir) Symlinks() ([]*SymlinkError, error) {
	f, err := d.root.Open(".")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	entries, err := f.ReadDir(-1)
	if err != nil {
		return nil, err
	}
	var links []*SymlinkError
	for _, e := range entries {
		if e.Type()&fs.ModeSymlink != 0 {
			target, _ := d.root.Readlink(e.Name())
			links = append(links, &SymlinkError{Path: filepath.Join(d.path, e.Name()), Target: target})
		}
	}
	slices.SortFunc(links, func(a, b *SymlinkError) int { return strings.Compare(a.Path, b.Path) })
	return links, nil
}

// Lstat describes the named entry of the directory without following it.
func (d *Dir) Lstat(name string) (fs.FileInfo, error) {
	if err := d.plain(name); err != nil {
		return nil, err
	}
	return d.root.Lstat(name)
}

// OpenFile opens the named file of the directory as os.OpenFile does, but
// refuses a symlink, or anything but a regular file, under that name: it
// is checked before it is opened, and the opened file is checked to be the
// one that was looked at. O_TRUNC takes effect only after that check, so a
// file swapped in meanwhile is refused, not emptied. O_CREATE|O_EXCL never
// follows a symlink in the first place.
func (d *Dir) OpenFile(name string, flag int, perm os.FileMode) (*os.File, error) {
	if err := d.plain(name); err != nil {
		return nil, err
	}
	if flag&(os.O_CREATE|os.O_EXCL) == os.O_CREATE|os.O_EXCL {
		return d.root.OpenFile(name, flag, perm)
	}
	for attempt := 0; ; attempt++ {
		fi, err := d.root.Lstat(name)
		if errors.Is(err, fs.ErrNotExist) && flag&os.O_CREATE != 0 {
			f, err := d.root.OpenFile(name, flag|os.O_EXCL, perm)
			if errors.Is(err, fs.ErrExist) && attempt < 3 {
				continue // created meanwhile: look at it
			}
			return f, err
		}
		if err != nil {
			return nil, err
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return nil, d.symlinkError(name)
		}
		if !fi.Mode().IsRegular() {
			return nil, fmt.Errorf("%s is not a regular file", filepath.Join(d.path, name))
		}
		f, err := d.root.OpenFile(name, flag&^(os.O_CREATE|os.O_TRUNC), perm)
		if err != nil {
			return nil, err
		}
		if opened, err := f.Stat(); err != nil || !os.SameFile(fi, opened) {
			f.Close()
			return nil, fmt.Errorf("%s changed while it was being opened", filepath.Join(d.path, name))
		}
		if flag&os.O_TRUNC != 0 {
			if err := f.Truncate(0); err != nil {
				f.Close()
				return nil, err
			}
		}
		return f, nil
	}
}

// ReadFile reads the named file of the directory, refusing a symlink.
func (d *Dir) ReadFile(name string) ([]byte, error) {
	f, err := d.OpenFile(name, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// WriteFile replaces the named file of the directory with data, atomically:
// the data goes to a new temporary file with an unpredictable name, created
// exclusively, which is then renamed over name. A symlink under name is
// refused rather than replaced.
func (d *Dir) WriteFile(name string, data []byte, perm os.FileMode) error {
	if err := d.plain(name); err != nil {
		return err
	}
	if fi, err := d.root.Lstat(name); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return d.symlinkError(name)
	}
	tmp := name + "." + strings.ToLower(rand.Text()) + ".tmp"
	f, err := d.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = d.root.Rename(tmp, name)
	}
	if err != nil {
		d.root.Remove(tmp)
		return err
	}
	return nil
}

// Remove removes the named entry of the directory; a symlink is removed
// itself, never what it points to.
func (d *Dir) Remove(name string) error {
	if err := d.plain(name); err != nil {
		return err
	}
	return d.root.Remove(name)
}

// plain accepts only the name of an entry of the directory itself.
func (d *Dir) plain(name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, `/\`) || !filepath.IsLocal(name) {
		return fmt.Errorf("%q is not a plain file name in %s", name, d.path)
	}
	return nil
}

func (d *Dir) symlinkError(name string) error {
	target, _ := d.root.Readlink(name)
	return &SymlinkError{Path: filepath.Join(d.path, name), Target: target}
}
