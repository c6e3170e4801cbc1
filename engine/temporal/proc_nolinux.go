//go:build !linux

package temporal

import "os/exec"

// startTied starts cmd. Only Linux can tie a command's life to its
// parent's: elsewhere a driven command whose worker was killed goes on
// until its run ends, serving its run's workflow beside the command of
// the worker that took the run over.
func startTied(cmd *exec.Cmd) error { return cmd.Start() }
