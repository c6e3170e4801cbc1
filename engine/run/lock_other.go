//go:build !unix

package run

// Lock is a no-op where flock is not available: concurrent runs into one
// directory are not prevented there.
func (d *Dir) Lock(what string) (unlock func(), err error) { return func() {}, nil }

// Running cannot tell without flock; no run is taken for running.
func Running(dir string) bool { return false }
