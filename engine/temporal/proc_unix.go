//go:build unix

package temporal

import (
	"os"
	"os/exec"
	"syscall"
)

// interrupt stops a command as Ctrl-C does.
func interrupt(cmd *exec.Cmd) { _ = cmd.Process.Signal(os.Interrupt) }

// lockFile takes an exclusive advisory lock on path, or reports false
// when another process holds it; the kernel releases it when the process
// ends, however it ends.
func lockFile(path string) (unlock func(), ok bool) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, false
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, false
	}
	return func() { f.Close() }, true
}
