//go:build !linux

package material

import "os"

// watchable reports whether the processes this one starts can be looked
// at as they run: not on this system, where only the walk of the work
// tree (blockingFile) finds what would keep git waiting.
func watchable() bool { return false }

// stuckOn finds nothing where processes cannot be looked at.
func stuckOn(pid int, held map[string]bool) (file string, ok bool) { return "", false }

// stop kills the process p.
func stop(p *os.Process) { p.Kill() }
