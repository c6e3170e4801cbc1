//go:build unix

package temporal

import (
	"os"
	"os/exec"
)

// interrupt stops a command as Ctrl-C does.
func interrupt(cmd *exec.Cmd) { _ = cmd.Process.Signal(os.Interrupt) }
