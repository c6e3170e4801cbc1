//go:build !unix

package temporal

import "os/exec"

// interrupt stops a command; without signals, by ending it.
func interrupt(cmd *exec.Cmd) { _ = cmd.Process.Kill() }
