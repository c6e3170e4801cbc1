//go:build unix

package mcpcmd

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"strconv"
	"syscall"
)

// detach gives a run's command its own process group, so that a Ctrl-C
// meant for the client or the server does not reach it.
func detach(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// interrupt stops a run as Ctrl-C would: the group of the command a
// server started (group), or the one process a server before it started.
func interrupt(pid int, group bool) {
	if group {
		pid = -pid
	}
	syscall.Kill(pid, syscall.SIGINT)
}

// ours reports whether pid is the command of job id: a process whose
// arguments name the job (its output directory does), where /proc tells;
// elsewhere, any live process.
func ours(pid int, id string) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return !errors.Is(err, fs.ErrNotExist) || !procMounted()
	}
	return bytes.Contains(b, []byte(id))
}

// procMounted reports whether /proc lists processes (Linux).
func procMounted() bool {
	_, err := os.Stat("/proc/self/cmdline")
	return err == nil
}

// signalled is the exit code a shell gives a process a signal ended, and
// whether one did.
func signalled(ee *exec.ExitError) (int, bool) {
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal()), true
	}
	return 0, false
}
