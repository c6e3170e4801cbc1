package index

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// PRAGMA integrity_check reads every page of the database, which costs
// more than everything else a question over an unchanged corpus does
// (about 0.2 s at 10,000 sources). It is there for a file sot did not
// leave as it is: a planted one, or one a crash or a disk damaged. So when
// Close leaves the file with no write-ahead log, it records the file's
// identity (device, inode, size, modification time and inode change time)
// beside it, and Open skips integrity_check for a file that still has
// exactly that identity and no log. Any write to the file, and any file
// put in its place (a checkout, a copy, an archive unpacked), changes its
// inode change time, which no one can set by hand, so such a file is
// checked in full. The schema is compared on every Open all the same.

// checkedSuffix names the file, beside the database, where Close records
// its identity.
const checkedSuffix = "-sot-checked"

// fingerprint is the identity of the database file as fi describes it,
// or "" where the system gives no inode change time.
func fingerprint(fi fs.FileInfo) string {
	dev, ino, ctime, ok := identity(fi)
	if !ok || !fi.Mode().IsRegular() {
		return ""
	}
	return fmt.Sprintf("sot index checked v1 %d %d %d %d %d\n", dev, ino, fi.Size(), fi.ModTime().UnixNano(), ctime)
}

// checkedBefore reports whether the database file at abs, as fi found it,
// is the one Close last left: a -wal that is not empty, a record that does
// not match, or one that cannot be read all say no.
func checkedBefore(abs string, fi fs.FileInfo) bool {
	want := fingerprint(fi)
	if want == "" {
		return false
	}
	if wal, err := os.Lstat(abs + "-wal"); err == nil && wal.Size() > 0 || err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false
	}
	root, err := os.OpenRoot(filepath.Dir(abs))
	if err != nil {
		return false
	}
	defer root.Close()
	name := filepath.Base(abs) + checkedSuffix
	if rfi, err := root.Lstat(name); err != nil || !rfi.Mode().IsRegular() {
		return false
	}
	f, err := root.Open(name)
	if err != nil {
		return false
	}
	defer f.Close()
	got, err := io.ReadAll(io.LimitReader(f, 256))
	return err == nil && string(got) == want
}

// recordChecked writes the identity of the database file at abs beside
// it, when the file is left with no write-ahead log; otherwise it removes
// the record, so that the next Open checks the file in full. The record is
// never written through a symlink: whatever has its name is removed first
// and the new file is created exclusively. A failure costs only a full
// check next time, so it is not reported.
func recordChecked(abs string) {
	root, err := os.OpenRoot(filepath.Dir(abs))
	if err != nil {
		return
	}
	defer root.Close()
	name := filepath.Base(abs) + checkedSuffix
	if err := root.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return
	}
	if wal, err := root.Lstat(filepath.Base(abs) + "-wal"); err == nil && wal.Size() > 0 || err != nil && !errors.Is(err, fs.ErrNotExist) {
		return
	}
	fi, err := root.Lstat(filepath.Base(abs))
	if err != nil {
		return
	}
	rec := fingerprint(fi)
	if rec == "" {
		return
	}
	f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return
	}
	_, werr := f.WriteString(rec)
	if cerr := f.Close(); werr != nil || cerr != nil {
		root.Remove(name)
	}
}
