//go:build unix

package material

import (
	"io/fs"
	"os"
	"syscall"
)

// ownedByUs reports whether the file fi describes belongs to the user
// sot runs as: git refuses a repository another user owns.
func ownedByUs(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Geteuid()
}
