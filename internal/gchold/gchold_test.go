package gchold

import (
	"runtime"
	"runtime/debug"
	"testing"
)

// gcSettings reads the collector's percent and memory limit without
// changing them.
func gcSettings() (int, int64) {
	p := debug.SetGCPercent(-1)
	debug.SetGCPercent(p)
	return p, debug.SetMemoryLimit(-1)
}

func TestHoldGC(t *testing.T) {
	percent, limit := gcSettings()
	env := func(vars map[string]string) func(string) string { return func(k string) string { return vars[k] } }

	release := Hold(env(nil))
	if p, l := gcSettings(); p != -1 || l != prepareHeapLimit {
		t.Fatalf("while held: GOGC %d, limit %d; want off until %d", p, l, prepareHeapLimit)
	}
	inner := Hold(env(nil)) // a second run in the same process
	inner()
	inner() // a release counts once
	if p, _ := gcSettings(); p != -1 {
		t.Fatalf("one of two holds released: GOGC %d, want still off", p)
	}
	release()
	if p, l := gcSettings(); p != percent || l != limit {
		t.Fatalf("released: GOGC %d, limit %d; want %d, %d as before", p, l, percent, limit)
	}

	for _, v := range []string{"GOGC", "GOMEMLIMIT"} {
		r := Hold(env(map[string]string{v: "200"}))
		if p, l := gcSettings(); p != percent || l != limit {
			t.Errorf("with %s set: GOGC %d, limit %d; want the runtime's own", v, p, l)
		}
		r()
	}
}

// The first collection while the collector is held off (the heap reached
// the limit) turns it back on, though the hold is not released: a run
// that allocates that much collects as usual from then on.
func TestHoldEndsAtTheFirstCollection(t *testing.T) {
	percent, limit := gcSettings()
	release := Hold(func(string) string { return "" })
	defer release()
	for range 100 {
		runtime.GC() // the cleanup runs on its own goroutine once a cycle found the sentinel gone
		if p, _ := gcSettings(); p != -1 {
			break
		}
		runtime.Gosched()
	}
	if p, l := gcSettings(); p != percent || l != limit {
		t.Fatalf("after a collection: GOGC %d, limit %d; want %d, %d as before", p, l, percent, limit)
	}
	release()
	if p, _ := gcSettings(); p != percent {
		t.Errorf("released after the collection: GOGC %d, want %d", p, percent)
	}
}

// A hold released before any collection leaves its sentinel behind: the
// collection that finds it gone later must not end a later hold.
func TestAnEarlierHoldDoesNotEndALaterOne(t *testing.T) {
	percent, _ := gcSettings()
	env := func(string) string { return "" }
	Hold(env)() // held and released at once
	gcHold.Lock()
	earlier := gcHold.gen
	gcHold.Unlock()
	release := Hold(env)
	defer release()
	restoreGC(earlier) // what the earlier sentinel's cleanup does
	if p, _ := gcSettings(); p != -1 {
		t.Fatalf("the earlier hold's cleanup turned the collector on (GOGC %d) during a later hold", p)
	}
	release()
	if p, _ := gcSettings(); p != percent {
		t.Fatalf("after the last release: GOGC %d, want %d", p, percent)
	}
}
