package cmdutil

import (
	"context"
	"runtime/debug"
	"testing"

	"github.com/sotlabs/sot/engine"
	"github.com/sotlabs/sot/internal/gchold"
)

// gcPercent reads the collector's percent without changing it.
func gcPercent() int {
	p := debug.SetGCPercent(-1)
	debug.SetGCPercent(p)
	return p
}

// A scenario command prepares its run with the collector held off, and
// its calls wait with the collector as the user left it: also when the
// command's start held it off (cmd/sot's gcstart), a hold RunScenario
// takes over and ends.
func TestRunScenarioHoldsTheCollectorUntilTheCallsStart(t *testing.T) {
	for _, startup := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "after a startup hold"}[startup], func(t *testing.T) {
			testRunScenarioHolds(t, startup)
		})
	}
}

func testRunScenarioHolds(t *testing.T, startup bool) {
	percent := gcPercent()
	f := testFactory(func(string) string { return "" })
	if startup {
		f.ReleaseStartup = gchold.Hold(func(string) string { return "" })
		if gcPercent() != -1 {
			t.Fatal("the startup hold did not turn the collector off")
		}
	}
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
