//go:build unix

package run

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/sotlabs/sot/engine"
)

// Lock takes the directory's run lock, so that two processes never run
// into one directory at once (both would pay for every call, and their
// journals would mix). The lock is an advisory flock on run.lock, opened in
// d and so never through a symlink: the kernel releases it when the
// process ends, even by SIGKILL, so a crashed run never leaves a stale
// lock behind. what names the work in the error ("a review").
func (d *Dir) Lock(what string) (unlock func(), err error) {
	f, err := d.OpenFile(LockFile, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open the run lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		b := make([]byte, 32)
		n, _ := f.ReadAt(b, 0)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			holder := "another process"
			if pid, perr := strconv.Atoi(strings.TrimSpace(string(b[:n]))); perr == nil {
				holder = fmt.Sprintf("process %d", pid)
			}
			return nil, &engine.UserError{Err: ErrRunInProgress,
				Msg: fmt.Sprintf("%s is already running in this output directory: %s is running %s into %s; wait for it to finish, or use another --output-dir", what, holder, what, d.Path())}
		}
		return nil, fmt.Errorf("take the run lock: %w", err)
	}
	f.Truncate(0)
	f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

// Running reports whether a process holds the run lock in dir (a run is
// under way there). It opens the lock read-only and never creates it.
func Running(dir string) bool {
	f, err := os.OpenFile(filepath.Join(dir, LockFile), os.O_RDONLY|syscall.O_NOFOLLOW, 0)
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
