//go:build unix

package plainfile

import "syscall"

const (
	// nonBlock opens a named pipe without waiting for a writer.
	nonBlock = syscall.O_NONBLOCK
	// noFollow refuses a symlink as the last part of the name (ELOOP).
	noFollow = syscall.O_NOFOLLOW
)
