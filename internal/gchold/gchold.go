// Package gchold holds the garbage collector off while a run prepares: the
// policy every scenario command shares, and which the benchmarks that
// time a run's preparation in a process of its own apply the same way.
package gchold

import (
	"runtime"
	"runtime/debug"
	"sync"
)

// A scenario command prepares its run (walks and reads a corpus, parses a
// diff, reads a graph) in a burst of allocation that starts on a small
// heap, and only then waits on models. Under the runtime's default the
// heap's goal starts at 4 MB and doubles, so that burst runs the
// collector again and again over a heap that is mostly still in use: on
// a 2-core machine, a question over 10,000 unchanged notes spent a third
// of its time before the first request collecting.
//
// So until the run's first calls are sent (in a command, when
// engine.WithWaiting says so: the collector then runs while the models
// think) the collector is off, up to a heap of prepareHeapLimit. The first collection that limit brings
// about (a large diff, a run reading 1,000 sources in full) gives the
// collector back its settings at once: such a run collects as it did
// before rather than over and over near the limit, and its peak memory
// stays where it was. A user who set GOGC or GOMEMLIMIT keeps what they
// set.

// prepareHeapLimit is the heap the preparation may grow to before the
// collector runs: more than a question over 10,000 unchanged notes
// allocates before its first call.
const prepareHeapLimit = 64 << 20

var gcHold struct {
	sync.Mutex
	n       int   // the holds not yet released
	off     bool  // the collector is off now
	gen     int   // counts the times it was turned off
	percent int   // GOGC before it was turned off
	limit   int64 // the memory limit before it was turned off
}

// Hold turns collection off until the release it returns is called
// (once or more), or until the heap reaches prepareHeapLimit. Holds nest:
// the runtime's settings come back when the last is released. It does
// nothing when getenv says GOGC or GOMEMLIMIT is set.
func Hold(getenv func(string) string) (release func()) {
	if getenv("GOGC") != "" || getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	gcHold.Lock()
	if gcHold.n == 0 {
		gcHold.percent = debug.SetGCPercent(-1)
		gcHold.limit = debug.SetMemoryLimit(prepareHeapLimit)
		gcHold.off = true
		gcHold.gen++
		// The first collection from now on finds the sentinel gone and
		// turns the collector back on, unless it was turned on (and
		// perhaps off again, by a later hold) before.
		sentinel := new([4]*byte)
		runtime.AddCleanup(sentinel, restoreGC, gcHold.gen)
	}
	gcHold.n++
	gcHold.Unlock()
	return sync.OnceFunc(func() {
		gcHold.Lock()
		gcHold.n--
		last, gen := gcHold.n == 0, gcHold.gen
		gcHold.Unlock()
		if last {
			restoreGC(gen)
		}
	})
}

// restoreGC gives the collector back the settings Hold found, if it is
// still off from the time gen turned it off.
func restoreGC(gen int) {
	gcHold.Lock()
	defer gcHold.Unlock()
	if gcHold.off && gcHold.gen == gen {
		gcHold.off = false
		debug.SetMemoryLimit(gcHold.limit)
		debug.SetGCPercent(gcHold.percent)
	}
}
