//go:build !unix

package temporal

import "os/exec"

// interrupt stops a command; without signals, by ending it.
func interrupt(cmd *exec.Cmd) { _ = cmd.Process.Kill() }

// lockFile reports false: without flock, every run copies its project
// afresh.
func lockFile(string) (func(), bool) { return nil, false }
