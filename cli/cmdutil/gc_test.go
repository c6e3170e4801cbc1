package cmdutil

import (
	"context"
	"runtime/debug"
	"testing"

	"github.com/sotlabs/sot/engine"
)

// gcPercent reads the collector's percent without changing it.
func gcPercent() int {
	p := debug.SetGCPercent(-1)
	debug.SetGCPercent(p)
	return p
}

// A scenario command prepares its run with the collector held off, and
// its calls wait with the collector as the user left it.
func TestRunScenarioHoldsTheCollectorUntilTheCallsStart(t *testing.T) {
	percent := gcPercent()
	f := testFactory(func(string) string { return "" })
	var during, after int
	err := RunScenario(t.Context(), f, func(ctx context.Context) error {
		during = gcPercent()
		var h engine.Hooks
		live := NewLive(f, &h)
		live.Start(1)
		after = gcPercent()
		live.Stop()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if during != -1 || after != percent {
		t.Errorf("GOGC %d while preparing and %d once the calls started; want off, then %d", during, after, percent)
	}
	if p := gcPercent(); p != percent {
		t.Errorf("after the run: GOGC %d, want %d", p, percent)
	}
}
