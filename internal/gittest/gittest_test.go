package gittest

import (
	"os/exec"
	"strings"
	"testing"
)

// Each git command is logged, in order, and still runs.
func TestLogCalls(t *testing.T) {
	calls := LogCalls(t)
	if got := calls(); got != "" {
		t.Fatalf("the log holds %q before any git command", got)
	}
	for _, args := range [][]string{{"version"}, {"version", "--build-options"}} {
		if out, err := exec.Command("git", args...).Output(); err != nil || len(out) == 0 {
			t.Fatalf("git %v: %q, %v", args, out, err)
		}
	}
	if got, want := calls(), "version\nversion --build-options\n"; got != want {
		t.Errorf("log %q, want %q", got, want)
	}
	if !strings.Contains(calls(), "version") {
		t.Error("the log was emptied by reading it")
	}
}
