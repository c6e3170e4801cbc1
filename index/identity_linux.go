package index

import (
	"io/fs"
	"syscall"
)

// identity is what tells one state of a file from another beyond its size
// and modification time: its device, inode and inode change time, which
// nobody can set by hand. ok is false where the system does not say.
func identity(fi fs.FileInfo) (dev, ino uint64, ctime int64, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, 0, false
	}
	return uint64(st.Dev), uint64(st.Ino), st.Ctim.Nano(), true
}
