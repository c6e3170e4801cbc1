//go:build !unix

package review

// lockHeld cannot tell without flock; no run is taken for running.
func lockHeld(path string) bool { return false }
