//go:build !unix

package mcpcmd

import (
	"os"
	"os/exec"
)

func detach(cmd *exec.Cmd) {}

// interrupt ends the process: without Unix signals there is no Ctrl-C
// to send, and the run's journal still holds every finished call.
func interrupt(pid int, group bool) {
	if p, err := os.FindProcess(pid); err == nil {
		p.Kill()
	}
}

func ours(pid int, id string) bool {
	p, err := os.FindProcess(pid)
	return err == nil && p != nil
}

func signalled(ee *exec.ExitError) (int, bool) { return 0, false }
