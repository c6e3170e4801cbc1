//go:build unix

package review

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/sotlabs/sot/internal/safedir"
)

// lockRun takes the output directory's run lock, so that two processes
// never run a review into one directory at once (both would pay for every
// call, and their journals would mix). The lock is an advisory flock on
// run.lock, opened in d and so never through a symlink: the kernel releases
// it when the process ends, even by SIGKILL, so a crashed run never leaves a
// stale lock behind.
func lockRun(d *safedir.Dir) (unlock func(), err error) {
	f, err := d.OpenFile(lockFile, os.O_CREATE|os.O_RDWR, 0o644)
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
			return nil, fmt.Errorf("%w: %s is running a review into %s; wait for it to finish, or use another --output-dir", ErrRunInProgress, holder, d.Path())
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
