package benchload

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// The hogs start starts are running while the test runs and gone once it
// ends.
func TestHogsStartAndStop(t *testing.T) {
	if _, err := exec.LookPath("pgrep"); err != nil {
		t.Skip("pgrep is not installed")
	}
	count := func() int {
		out, _ := exec.Command("pgrep", "-f", "while :; do :; done").Output()
		return len(strings.Fields(string(out)))
	}
	before := count()
	t.Run("hogs", func(t *testing.T) {
		start(t, 2)
		if got := count() - before; got != 2 {
			t.Errorf("%d hogs running, want 2", got)
		}
	})
	if got := count() - before; got != 0 {
		t.Errorf("%d hogs still running after the test", got)
	}
}

func TestFromEnvUnset(t *testing.T) {
	t.Setenv(Env, "")
	if n := FromEnv(t); n != 0 {
		t.Errorf("FromEnv started %d hogs with %s unset", n, Env)
	}
}

func TestLoadAverage(t *testing.T) {
	if _, err := os.Stat("/proc/loadavg"); err != nil {
		t.Skip("no /proc/loadavg here")
	}
	if l := LoadAverage(); l < 0 {
		t.Errorf("load average %v, want the one /proc/loadavg gives", l)
	}
}

// SpawnTime times real starts of a program: never zero, and an error only
// where there is no true to run.
func TestSpawnTime(t *testing.T) {
	d, err := SpawnTime(3)
	if err != nil {
		t.Skip(err)
	}
	if d <= 0 || d > time.Minute {
		t.Errorf("SpawnTime = %v", d)
	}
}
