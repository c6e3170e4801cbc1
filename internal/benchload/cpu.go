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
