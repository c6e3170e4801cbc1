//go:build !unix

package review

import "github.com/sotlabs/sot/internal/safedir"

// lockRun is a no-op where flock is not available: concurrent runs into one
// output directory are not prevented there.
func lockRun(d *safedir.Dir) (unlock func(), err error) { return func() {}, nil }
