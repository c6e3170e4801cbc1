// Package gittest helps tests see which git commands the code under test
// runs.
package gittest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// LogCalls puts first on the PATH, for the rest of the test, a git that
// writes its command line to a log, a line a command, before it runs the
// real git. It returns a function that reads the log. It skips the test
// when git is not installed.
func LogCalls(t testing.TB) func() string {
	t.Helper()
	real, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed")
	}
	bin, log := t.TempDir(), filepath.Join(t.TempDir(), "calls")
	script := "#!/bin/sh\nprintf '%s\\n' \"$*\" >> '" + log + "'\nexec '" + real + "' \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	return func() string {
		b, err := os.ReadFile(log)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		return string(b)
	}
}
