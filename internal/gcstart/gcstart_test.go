package gcstart

import (
	"os"
	"runtime/debug"
	"testing"
)

// The collector is off from the package's initialisation (this test
// binary's too) until Release, which gives back the setting found; a
// second Release changes nothing.
func TestHeldFromInitUntilRelease(t *testing.T) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		t.Skip("GOGC or GOMEMLIMIT is set: the hold leaves the collector as the user set it")
	}
	percent := func() int {
		p := debug.SetGCPercent(-1)
		debug.SetGCPercent(p)
		return p
	}
	if p := percent(); p != -1 {
		t.Fatalf("GOGC %d before Release; want off since the package initialised", p)
	}
	Release()
	if p := percent(); p != 100 {
		t.Errorf("GOGC %d after Release; want 100, the default the process started with", p)
	}
	debug.SetGCPercent(50)
	defer debug.SetGCPercent(100)
	Release()
	if p := percent(); p != 50 {
		t.Errorf("a second Release set GOGC to %d; want it left at 50", p)
	}
}
