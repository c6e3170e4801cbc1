package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkSotStart: how long the sot binary takes to start and exit when
// it has nothing to do (sot --help), the part of every command's time that
// no work explains: loading, the runtime's start, the packages'
// initialisation. Reported as medians: start-ms, the wall time, and
// start-cpu-ms, the process's CPU time (user and system). It runs the
// binary SOT_BENCH_BIN names, or else builds ./cmd/sot (this test binary
// would measure its own test dependencies too). With GOGC or GOMEMLIMIT
// set the collector is not held off while the packages initialise
// (internal/gcstart), which is how to see what the hold saves.
func BenchmarkSotStart(b *testing.B) {
	exe := os.Getenv("SOT_BENCH_BIN")
	if exe == "" {
		exe = filepath.Join(b.TempDir(), "sot")
		if out, err := exec.Command("go", "build", "-o", exe, ".").CombinedOutput(); err != nil {
			b.Fatalf("go build: %v\n%s", err, out)
		}
	}
	var walls, cpus []time.Duration
	for b.Loop() {
		cmd := exec.Command(exe, "--help")
		start := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("sot --help: %v\n%s", err, out)
		}
		walls = append(walls, time.Since(start))
		cpus = append(cpus, cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime())
	}
	id := func(d time.Duration) time.Duration { return d }
	report(b, map[string]float64{"start-ms": ms(medianOf(walls, id)), "start-cpu-ms": ms(medianOf(cpus, id))})
}
