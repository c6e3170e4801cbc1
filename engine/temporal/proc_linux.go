//go:build linux

package temporal

import (
	"os/exec"
	"runtime"
	"syscall"
)

// startTied starts cmd so that it is killed when this process dies: a
// driven command whose worker is gone stops serving its run's workflow,
// which another worker's command then takes over from its history.
// Linux sends the signal when the thread that started the command ends,
// so the thread is held for the start (Go ends no other thread early).
func startTied(cmd *exec.Cmd) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	return cmd.Start()
}
