// Package plainfile reads files that someone else may have written (a
// repository's configuration and personas, a project's themes, a graph
// file) and refuses any that is not a regular file, without waiting on
// it: a named pipe would keep a plain read waiting forever for a writer,
// and a device such as /dev/zero would never end.
package plainfile

import (
	"errors"
	"io"
	"io/fs"
	"os"
)

// ErrNotRegular means a file is a named pipe, a socket, a device or a
// directory: nothing sot reads as text.
var ErrNotRegular = errors.New("not a regular file (a named pipe, socket, device or directory), so sot does not read it; replace it with a plain file")

// ErrSymlink means a file sot wrote itself is a symlink: someone else put
// it there.
var ErrSymlink = errors.New("a symlink where sot keeps a file of its own; sot does not follow it")

// Read returns the bytes of the file name, after any symlink, when it is
// a regular file; otherwise an error wrapping ErrNotRegular, found without
// waiting. Errors are *fs.PathError, as the os package's are, so
// errors.Is(err, fs.ErrNotExist) still tells a missing file.
func Read(name string) ([]byte, error) {
	f, err := Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// ReadIn is Read of the file name in root.
func ReadIn(root *os.Root, name string) ([]byte, error) {
	f, err := root.OpenFile(name, os.O_RDONLY|nonBlock, 0)
	if err != nil {
		return nil, err
	}
	if f, err = regular(f, name); err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// ReadOwn reads a file sot wrote (a run's record, result or ignore file),
// found where someone else could have put another: as Read, and a symlink
// under name is refused too, since sot writes none. A link committed in
// a repository as a run's record, to /dev/zero or to a file of the user's,
// is never followed.
func ReadOwn(name string) ([]byte, error) {
	f, err := OpenOwn(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// OpenOwn opens a file sot wrote to read it, as ReadOwn does.
func OpenOwn(name string) (*os.File, error) {
	link := func() bool { fi, err := os.Lstat(name); return err == nil && fi.Mode()&fs.ModeSymlink != 0 }
	if noFollow == 0 && link() {
		return nil, &fs.PathError{Op: "read", Path: name, Err: ErrSymlink}
	}
	f, err := os.OpenFile(name, os.O_RDONLY|nonBlock|noFollow, 0)
	if err != nil {
		if link() {
			return nil, &fs.PathError{Op: "read", Path: name, Err: ErrSymlink}
		}
		return nil, err
	}
	return regular(f, name)
}

// Open opens the file name to read it, when it is a regular file, as Read
// does.
func Open(name string) (*os.File, error) {
	// Opened without waiting: a named pipe opens at once, and is then
	// refused by its mode.
	f, err := os.OpenFile(name, os.O_RDONLY|nonBlock, 0)
	if err != nil {
		return nil, err
	}
	return regular(f, name)
}

// regular returns f, opened as name, when it is a regular file; else it
// closes it and returns an error wrapping ErrNotRegular.
func regular(f *os.File, name string) (*os.File, error) {
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, &fs.PathError{Op: "read", Path: name, Err: ErrNotRegular}
	}
	return f, nil
}
