package cmdutil

import (
	"runtime/debug"
	"sync"
)

// A scenario command prepares its run (walks and reads a corpus, parses a
// diff, reads a graph) in a burst of allocation that starts on a small
// heap, and only then waits on models. Under the runtime's default the
// heap's goal starts at 4 MB and doubles, so that burst runs the
// collector again and again over a heap that is mostly still in use: on
// a 2-core machine, a question over 10,000 unchanged notes spent a third
// of its time before the first request collecting. Until the run's calls
// start (Live.Start) the collector runs only once the heap reaches
// prepareHeapLimit, and then as it did before.
//
// A user who set GOGC or GOMEMLIMIT keeps what they set.

// prepareHeapLimit is the heap the preparation may grow to before the
// collector runs: more than a question over 10,000 unchanged notes
// allocates before its first call, and little enough that a run which
// allocates far more (reading 1,000 sources in full) collects as it goes
// and peaks where it did before (about 120 MB).
const prepareHeapLimit = 64 << 20

var gcHold struct {
	sync.Mutex
	n       int   // the holds not yet released
	percent int   // GOGC before the first hold
	limit   int64 // the memory limit before the first hold
}

// holdGC defers collection until the release it returns is called (once
// or more). Holds nest: the runtime's settings come back when the last
// is released. It does nothing when getenv says GOGC or GOMEMLIMIT is set.
func holdGC(getenv func(string) string) (release func()) {
	if getenv("GOGC") != "" || getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	gcHold.Lock()
	if gcHold.n == 0 {
		gcHold.percent = debug.SetGCPercent(-1)
		gcHold.limit = debug.SetMemoryLimit(prepareHeapLimit)
	}
	gcHold.n++
	gcHold.Unlock()
	return sync.OnceFunc(func() {
		gcHold.Lock()
		defer gcHold.Unlock()
		if gcHold.n--; gcHold.n == 0 {
			debug.SetMemoryLimit(gcHold.limit)
			debug.SetGCPercent(gcHold.percent)
		}
	})
}
