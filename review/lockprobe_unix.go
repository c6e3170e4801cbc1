//go:build unix

package review

import (
	"os"
	"syscall"
)

// lockHeld reports whether a process holds the run lock at path (a run is
// under way there). It opens the file read-only and never creates it.
func lockHeld(path string) bool {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err != nil {
		return true
	}
	syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return false
}
