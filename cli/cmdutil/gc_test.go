package cmdutil

import (
	"context"
	"runtime"

	"runtime/debug"
	"testing"

	"github.com/sotlabs/sot/engine"
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

	release := holdGC(env(nil))
	if p, l := gcSettings(); p != -1 || l != prepareHeapLimit {
		t.Fatalf("while held: GOGC %d, limit %d; want off until %d", p, l, prepareHeapLimit)
	}
	inner := holdGC(env(nil)) // a second run in the same process
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
		r := holdGC(env(map[string]string{v: "200"}))
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
	release := holdGC(func(string) string { return "" })
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
	holdGC(env)() // held and released at once
	gcHold.Lock()
	earlier := gcHold.gen
	gcHold.Unlock()
	release := holdGC(env)
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

// A scenario command prepares its run with the collector held off, and
// its calls wait with the collector as the user left it.
func TestRunScenarioHoldsTheCollectorUntilTheCallsStart(t *testing.T) {
	percent, _ := gcSettings()
	f := testFactory(func(string) string { return "" })
	var during, after int
	err := RunScenario(t.Context(), f, func(ctx context.Context) error {
		during, _ = gcSettings()
		var h engine.Hooks
		live := NewLive(f, &h)
		live.Start(1)
		after, _ = gcSettings()
		live.Stop()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if during != -1 || after != percent {
		t.Errorf("GOGC %d while preparing and %d once the calls started; want off, then %d", during, after, percent)
	}
	if p, _ := gcSettings(); p != percent {
		t.Errorf("after the run: GOGC %d, want %d", p, percent)
	}
}
