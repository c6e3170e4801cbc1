//go:build !unix

package review

// lockRun is a no-op where flock is not available: concurrent runs into one
// output directory are not prevented there.
func lockRun(dir string) (unlock func(), err error) { return func() {}, nil }
