package benchload

import (
	"syscall"
	"time"
)

// CPUTime is the CPU time, user and system, this process has spent: a
// figure the machine's load stretches less than the wall time.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// ChildrenCPUTime is the CPU time, user and system, spent by this
// process's children that have ended and been waited for: the git
// processes a review starts, say.
func ChildrenCPUTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
