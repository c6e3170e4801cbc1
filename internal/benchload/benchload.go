// Package benchload puts the machine under load for the benchmarks whose
// figures the README quotes "under load": processes that only spin on the
// CPU, as a build or a busy CI neighbour would. It is used by tests only.
package benchload

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Env names the number of CPU hogs a benchmark runs beside: eight on the
// project's 2-core benchmark VM put its load average at 9 to 10, inside
// the 7 to 11 the issue calls loaded.
const Env = "SOT_BENCH_HOGS"

// FromEnv starts the number of CPU hogs Env names (none when it is unset
// or 0), each a shell spinning in a loop, and stops them when the
// benchmark ends. It returns how many it started.
//
// The contention starts at once, but a VM's share of its host's CPU can
// shrink under sustained load, and the load average climbs towards the
// number of busy processes only over a minute or so: so FromEnv returns
// once the load average has reached loaded (or, with fewer hogs, most of
// their number), or after two minutes, saying how long it waited.
func FromEnv(tb testing.TB) int {
	tb.Helper()
	v := os.Getenv(Env)
	if v == "" {
		return 0
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		tb.Fatalf("%s=%q: want the number of CPU hogs, such as 8", Env, v)
	}
	start(tb, n)
	settle(tb, n, 2*time.Minute)
	return n
}

// start starts n CPU hogs and stops them when tb ends.
func start(tb testing.TB, n int) {
	tb.Helper()
	for range n {
		cmd := exec.Command("sh", "-c", "while :; do :; done")
		if err := cmd.Start(); err != nil {
			tb.Fatalf("start a CPU hog (%s=%d needs sh): %v", Env, n, err)
		}
		tb.Cleanup(func() {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		})
	}
}

// settle waits, at most limit, until the load average of n hogs has
// reached loaded, or most of n when n is smaller.
func settle(tb testing.TB, n int, limit time.Duration) {
	if n == 0 || LoadAverage() < 0 {
		return
	}
	target := min(loaded, 0.8*float64(n))
	begin := time.Now()
	for LoadAverage() < target && time.Since(begin) < limit {
		time.Sleep(time.Second)
	}
	tb.Logf("%d CPU hogs; the load average reached %.2f after %v (target %.1f)", n, LoadAverage(), time.Since(begin).Round(time.Second), target)
}

// loaded is the load average at which the loaded figures start.
const loaded = 7

// LoadAverage returns the machine's load average over the last minute,
// or -1 where /proc/loadavg cannot be read.
func LoadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return -1
	}
	var l float64
	if _, err := fmt.Sscan(strings.TrimSpace(string(b)), &l); err != nil {
		return -1
	}
	return l
}
