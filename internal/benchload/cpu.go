package benchload

import (
	"os/exec"
	"slices"
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

// SpawnTime is the median wall time, over n runs, of starting a program
// that does nothing (true) and waiting for it: a figure of how fast the
// machine is at the moment, under whatever load it has, for benchmarks
// whose figures are mostly the starts of processes (a review's git
// commands). The same build's figures move with it from one hour to the
// next on a virtual machine.
func SpawnTime(n int) (time.Duration, error) {
	bin, err := exec.LookPath("true")
	if err != nil {
		return 0, err
	}
	ds := make([]time.Duration, 0, n)
	for range n {
		start := time.Now()
		if err := exec.Command(bin).Run(); err != nil {
			return 0, err
		}
		ds = append(ds, time.Since(start))
	}
	slices.Sort(ds)
	return ds[len(ds)/2], nil
}
